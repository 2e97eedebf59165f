package app

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

const (
	// crashChildEnv names the database a crash child records into; without it the child test
	// returns at once, so a normal `go test` is unaffected.
	crashChildEnv = "LONGHAUL_HISTORY_CRASH_CHILD"
	// crashUpstreamEnv is the scripted upstream's base URL.
	crashUpstreamEnv = "LONGHAUL_HISTORY_CRASH_UPSTREAM"
	// flushInterval is the recorder's promise: an exchange is committed within 2×FlushEvery of
	// finishing (default FlushEvery 100 ms).
	flushInterval = 200 * time.Millisecond
)

// TestHistoryCrashChild is the process TestHistorySurvivesSIGKILL kills: the real proxy with
// the recorder, as main wires them, printing "LISTEN URL" and serving until killed (or until
// its stdin closes, so it never outlives the parent).
func TestHistoryCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		return
	}
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(st, RecorderOptions{})
	srv, err := proxy.New(proxy.Config{Port: 0, CaptureBodies: true}, proxy.Options{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]proxy.Account{{ID: 1, Label: "crash", Kind: "anthropic", BaseURL: os.Getenv(crashUpstreamEnv), Secret: "sk-ant-crash-upstream-00000000001", Enabled: true}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	go rec.Run(ctx)
	fmt.Printf("LISTEN http://%s\n", srv.Addr())
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // EOF: the parent is gone
}

// TestHistorySurvivesSIGKILL kills a proxy+recorder process with SIGKILL while it serves
// 300 requests/s (40 under the race detector), then checks that the database is intact and holds every exchange that
// finished more than one flush interval before the kill.
func TestHistorySurvivesSIGKILL(t *testing.T) {
	up := proxytest.NewUpstream()
	up.SetRecordBodies(false)
	defer up.Close()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHistoryCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashUpstreamEnv+"="+up.URL)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // already dead on the normal path
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
				base <- u
			}
		}
	}()
	var url string
	select {
	case url = <-base:
	case <-time.After(60 * time.Second):
		t.Fatal("child proxy did not start within 60 s")
	}

	type done struct {
		id string
		at time.Time
	}
	var mu sync.Mutex
	var finished []done
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 128, MaxIdleConnsPerHost: 128}}
	defer client.CloseIdleConnections()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	rate := 300
	if raceEnabled {
		// Instrumented, the pure-Go SQLite writes ~30× slower (≈ 150 full rows/s here): the
		// recorder is then the bottleneck, not the property under test.
		rate = 40
	}
	wg.Go(func() {
		start := time.Now()
		for sent := 0; ; {
			select {
			case <-stop:
				return
			default:
			}
			for due := int(time.Since(start).Seconds()*float64(rate)) + 1; sent < due; sent++ {
				i := sent
				wg.Go(func() {
					resp, err := client.Post(url+"/v1/messages", "application/json", strings.NewReader(messagesBody(i%2 == 0, "crash-"+strconv.Itoa(i%10))))
					if err != nil {
						return // the kill
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode == http.StatusOK {
						mu.Lock()
						finished = append(finished, done{resp.Header.Get("Longhaul-Request-Id"), time.Now()})
						mu.Unlock()
					}
				})
			}
			time.Sleep(time.Millisecond)
		}
	})
	time.Sleep(3 * time.Second)
	killedAt := time.Now()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	cmd.Wait() //nolint:errcheck // "signal: killed" is the point

	// Integrity first, on a plain connection: nothing may repair the file before we look.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check after SIGKILL = %q, %v; want ok", check, err)
	}
	recorded := map[string]string{}
	rows, err := db.Query(`SELECT id, state FROM exchanges`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, state string
		if err := rows.Scan(&id, &state); err != nil {
			t.Fatal(err)
		}
		recorded[id] = state
	}
	rows.Close()
	mustHave, missing, late := 0, 0, 0
	for _, d := range finished {
		if d.at.After(killedAt.Add(-flushInterval)) {
			if recorded[d.id] == "finished" {
				late++
			}
			continue
		}
		mustHave++
		if recorded[d.id] != "finished" {
			missing++
			if missing <= 5 {
				t.Errorf("exchange %s finished %v before the kill but is %q in the database; want finished", d.id, killedAt.Sub(d.at), recorded[d.id])
			}
		}
	}
	t.Logf("killed under %d req/s: %d exchanges finished > %v before the kill, %d missing; %d rows in the database (%d finished within the last interval were saved too)",
		rate, mustHave, flushInterval, missing, len(recorded), late)
	if mustHave < rate { // at least a second's worth, or the test proved nothing
		t.Errorf("only %d exchanges finished before the kill; the load did not run", mustHave)
	}
}
