package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"longhaul/proxy/proxytest"
)

// buildBinary compiles the real longhaul binary once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "longhaul")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// isolatedEnv keeps the binary away from the developer's real config and keys: no session
// bus, so test secrets never reach the developer's login keyring (store/keychain treats a
// missing bus as no keychain).
func isolatedEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LONGHAUL_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") || strings.HasPrefix(kv, "DBUS_SESSION_BUS_ADDRESS=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
}

func runCLI(t *testing.T, bin, dataDir, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "--data-dir", dataDir)...)
	cmd.Env = isolatedEnv(t.TempDir())
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// eventually retries check until it holds: the instance polls the database twice a second.
// The 30 s limit only bounds a failure on a busy machine; a pass returns at once.
func eventually(t *testing.T, what string, check func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, detail := check()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not true within 30s (last: %s)", what, detail)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func post(url, body string) (int, string) {
	resp, err := http.Post(url+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestCLIChangesReachRunningInstance runs the real binary headless and edits
// its data dir with the CLI: the instance must apply each change without a
// restart, and shut down cleanly on SIGTERM.
func TestCLIChangesReachRunningInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	up := proxytest.NewUpstream()
	defer up.Close()
	up.SetDefault(proxytest.Reply{Message: proxytest.TextMessage("", "hello from upstream")})
	dataDir := t.TempDir()
	port := proxytest.FreePort(t)

	instance := exec.Command(bin, "--headless", "--data-dir", dataDir, "--port", strconv.Itoa(port), "--ui-addr", "127.0.0.1:0")
	instance.Env = isolatedEnv(t.TempDir())
	stdout, err := instance.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	instance.Stderr = &stderr
	if err := instance.Start(); err != nil {
		t.Fatal(err)
	}
	defer instance.Process.Kill() //nolint:errcheck // already exited on the happy path
	uiURL := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "Longhaul UI: "); ok {
				uiURL <- u
			}
		}
	}()
	select {
	case <-uiURL:
	case <-time.After(30 * time.Second):
		t.Fatalf("instance did not start; stderr:\n%s", stderr.String())
	}
	proxyURL := "http://127.0.0.1:" + strconv.Itoa(port)
	req := `{"model":"claude-sonnet-4-5","max_tokens":16,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

	if status, body := post(proxyURL, req); status != 503 || !strings.Contains(body, "overloaded_error") {
		t.Fatalf("before any account: %d %s; want 503 overloaded_error", status, body)
	}
	// The same UI and its API also ride on the proxy's port. (Without a
	// frontend build, dist/ holds only .gitkeep, which the file server lists.)
	page := "<div id="
	if _, err := os.Stat(filepath.Join("frontend", "dist", "index.html")); err != nil {
		page = ".gitkeep"
	}
	for path, want := range map[string]string{"/longhaul/": page, "/longhaul/v1/status": `"running":true`} {
		resp, err := http.Get(proxyURL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s on the proxy port = %d %.200s; want 200 with %q", path, resp.StatusCode, body, want)
		}
	}

	out, err := runCLI(t, bin, dataDir, "sk-ant-api03-cli-secret-7777\n", "account", "add", "--base-url", up.URL, "--key", "-", "--label", "from-cli")
	if err != nil || !strings.Contains(out, "added account 1") || strings.Contains(out, "cli-secret") {
		t.Fatalf("account add: %v %q", err, out)
	}
	eventually(t, "instance uses the account the CLI added", func() (bool, string) {
		status, body := post(proxyURL, req)
		return status == 200 && strings.Contains(body, "message_stop"), strconv.Itoa(status) + " " + body
	})
	if got := up.LastRequest().Header.Get("X-Api-Key"); got != "sk-ant-api03-cli-secret-7777" {
		t.Errorf("upstream key = %q; want the CLI's key", got)
	}
	out, err = runCLI(t, bin, dataDir, "", "account", "list")
	if err != nil || !strings.Contains(out, "from-cli") || !strings.Contains(out, "sk-…7777") || strings.Contains(out, "cli-secret") {
		t.Errorf("account list: %v\n%s", err, out)
	}

	if out, err := runCLI(t, bin, dataDir, "", "settings", "set", "proxy.max_body_bytes", "1024"); err != nil {
		t.Fatalf("settings set: %v %s", err, out)
	}
	big := `{"model":"m","pad":"` + strings.Repeat("x", 2000) + `"}`
	eventually(t, "instance applies the new body limit", func() (bool, string) {
		status, body := post(proxyURL, big)
		return status == 413, strconv.Itoa(status) + " " + body
	})
	if out, _ := runCLI(t, bin, dataDir, "", "settings", "get", "proxy.max_body_bytes"); strings.TrimSpace(out) != "1024" {
		t.Errorf("settings get = %q; want 1024", out)
	}
	out, err = runCLI(t, bin, dataDir, "", "settings", "set", "proxy.experimental.context_compression_threshold_l1", "0.9")
	if err == nil || !strings.Contains(out, "context_compression_threshold_l2") {
		t.Errorf("invalid threshold accepted: %v %q", err, out)
	}

	// Disable and re-enable: the instance follows each change.
	if out, err := runCLI(t, bin, dataDir, "", "account", "disable", "1"); err != nil || !strings.Contains(out, "disabled account 1") {
		t.Fatalf("account disable: %v %s", err, out)
	}
	eventually(t, "instance stops using the disabled account", func() (bool, string) {
		status, body := post(proxyURL, req)
		return status == 503 && strings.Contains(body, "disabled"), strconv.Itoa(status) + " " + body
	})
	if out, err := runCLI(t, bin, dataDir, "", "account", "enable", "1"); err != nil || !strings.Contains(out, "enabled account 1") {
		t.Fatalf("account enable: %v %s", err, out)
	}
	eventually(t, "instance uses the re-enabled account", func() (bool, string) {
		status, body := post(proxyURL, req)
		return status == 200, strconv.Itoa(status) + " " + body
	})

	if out, err := runCLI(t, bin, dataDir, "", "account", "rm", "1"); err != nil {
		t.Fatalf("account rm: %v %s", err, out)
	}
	eventually(t, "instance drops the removed account", func() (bool, string) {
		status, body := post(proxyURL, req)
		return status == 503, strconv.Itoa(status) + " " + body
	})

	if err := instance.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- instance.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("instance exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("instance did not exit after SIGTERM (30 s hang guard)")
	}
	if strings.Contains(stderr.String(), "cli-secret") {
		t.Error("the account secret appeared in the instance's logs")
	}
}

func TestCLIUsageErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dataDir := t.TempDir()
	for _, args := range [][]string{{"account"}, {"account", "rm", "notanumber"}, {"account", "rm", "42"}, {"settings", "set", "proxy.prot", "1"}, {"settings", "set", "proxy.port", "99999"}, {"bogus"}} {
		out, err := runCLI(t, bin, dataDir, "", args...)
		if err == nil {
			t.Errorf("longhaul %v succeeded; want an error (output %q)", args, out)
		}
		if strings.Contains(out, "panic") {
			t.Errorf("longhaul %v panicked: %s", args, out)
		}
	}
	out, _ := runCLI(t, bin, dataDir, "", "settings", "set", "proxy.prot", "1")
	if !strings.Contains(out, "proxy.port") {
		t.Errorf("unknown key error does not suggest proxy.port: %q", out)
	}
}
