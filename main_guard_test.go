package main

import (
	"bufio"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"longhaul/proxy/proxytest"
)

// Issue 11, item 1: `--ui-addr 0.0.0.0:…` was accepted without a client key, and anyone on
// the network could then drive the UI's API by sending `Host: localhost`. The UI's listener
// must refuse to start on a non-loopback address without a key; with a key, a LAN caller
// needs it whatever Host it sends. The first half failed on the code before the guard.
func TestHeadlessUIOnOpenAddressNeedsTheClientKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dataDir := t.TempDir()
	start := func() (ui string, exited bool, stderr string) {
		t.Helper()
		cmd := exec.Command(bin, "--headless", "--data-dir", dataDir, "--port", strconv.Itoa(proxytest.FreePort(t)), "--ui-addr", "0.0.0.0:0")
		cmd.Env = isolatedEnv(t.TempDir())
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck // may have exited already
		lines := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if u, ok := strings.CutPrefix(sc.Text(), "Longhaul UI: "); ok {
					lines <- u
				}
			}
			close(lines)
		}()
		select {
		case u, ok := <-lines:
			if !ok { // stdout closed: the process ended
				cmd.Wait() //nolint:errcheck // the exit is what we look at
				return "", true, errOut.String()
			}
			return u, false, "" // still running: its stderr is still being written
		case <-time.After(30 * time.Second):
			cmd.Process.Kill() //nolint:errcheck // it may have just exited
			cmd.Wait()         //nolint:errcheck // stderr is complete once Wait returns
			t.Fatalf("instance neither started nor exited; stderr:\n%s", errOut.String())
		}
		return "", false, ""
	}

	ui, exited, stderr := start()
	if !exited || !strings.Contains(stderr, "proxy.client_key") {
		t.Fatalf("without a key: UI at %q, exited %t, stderr %q; want a refusal naming proxy.client_key", ui, exited, stderr)
	}

	if out, err := runCLI(t, bin, dataDir, "", "settings", "set", "proxy.client_key", "lh-lan-key-5678-abcdef"); err != nil {
		t.Fatalf("settings set: %v %s", err, out)
	}
	ui, exited, stderr = start()
	if exited {
		t.Fatalf("with a key the instance exited: %s", stderr)
	}
	_, port, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(ui, "http://"), "/"))
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+port+"/longhaul/v1/settings", nil)
	req.Host = "localhost"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET settings with Host: localhost and no key = %d; want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer lh-lan-key-5678-abcdef")
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET settings with the key = %d; want 200", resp.StatusCode)
	}
}
