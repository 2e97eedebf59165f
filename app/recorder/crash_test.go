package recorder

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

	"longhaul/app/internal/wait"
	"longhaul/proxy"
	"longhaul/proxy/pool"
	"longhaul/proxy/proxytest"
	"longhaul/store"
)

const (
	// crashChildEnv names the database a crash child records into; without it the child test
	// returns at once, so a normal `go test` is unaffected.
	crashChildEnv = "LONGHAUL_HISTORY_CRASH_CHILD"
	// crashUpstreamEnv is the scripted upstream's base URL.
	crashUpstreamEnv = "LONGHAUL_HISTORY_CRASH_UPSTREAM"
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
	rec := New(st, Options{})
	srv, err := proxy.New(proxy.Config{Port: 0, CaptureBodies: true}, proxy.Options{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAccounts([]pool.Account{{ID: 1, Label: "crash", Kind: "anthropic", BaseURL: os.Getenv(crashUpstreamEnv), Secret: "sk-ant-crash-upstream-00000000001", Enabled: true}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	go rec.Run(ctx)
	fmt.Printf("LISTEN http://%s\n", srv.Addr())
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // EOF: the parent is gone
}

// TestHistorySurvivesSIGKILL kills a proxy+recorder process with SIGKILL while it serves a
// steady load (so a batch is being written at the moment of the kill), then checks that the
// database is intact and that every exchange it had committed before the kill is still there.
// "Committed" is what a reader of the database saw, not a guess from the clock: the test waits
// until the exchanges its first requests finished are all visible as finished rows, notes
// every finished row it can see, and kills the child right after that look.
func TestHistorySurvivesSIGKILL(t *testing.T) {
	up := proxytest.NewUpstream()
	up.SetRecordBodies(false)
	defer up.Close()
	path := filepath.Join(t.TempDir(), "longhaul.db")
	cmd, url := startCrashChild(t, path, up.URL)

	rate := 300
	if raceEnabled {
		rate = 40 // instrumented, the writer manages ≈ 150 full rows/s
	}
	load := startLoad(url, rate)
	// Wait for a second's worth of finished requests, then for all of them to be committed.
	wait.Until(t, "the child to finish "+strconv.Itoa(rate)+" requests", func() bool { return len(load.done()) >= rate })
	acknowledged := load.done()
	var committed map[string]bool
	wait.Until(t, "the first exchanges to be committed", func() bool {
		committed = finishedRows(t, path)
		for _, id := range acknowledged {
			if !committed[id] {
				return false
			}
		}
		return true
	})
	if err := cmd.Process.Kill(); err != nil { // SIGKILL on Unix, with requests still arriving
		t.Fatal(err)
	}
	load.stop()
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
	after := finishedRows(t, path)
	missing := 0
	for id := range committed {
		if !after[id] {
			missing++
			if missing <= 5 {
				t.Errorf("exchange %s was committed before the kill but is not a finished row after it", id)
			}
		}
	}
	finished := load.done()
	t.Logf("killed under %d req/s: %d exchanges committed before the kill, %d of them missing after; %d finished rows after the kill, %d requests finished by then",
		rate, len(committed), missing, len(after), len(finished))
}

// startCrashChild runs TestHistoryCrashChild in a child process and returns it with its URL.
func startCrashChild(t *testing.T, path, upstream string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHistoryCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashUpstreamEnv+"="+upstream)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) //nolint:errcheck // already dead on the normal path
	base := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "LISTEN "); ok {
				base <- u
			}
		}
	}()
	select {
	case u := <-base:
		return cmd, u
	case <-time.After(2 * time.Minute): // a hang guard: the child is a fresh test binary
		t.Fatal("child proxy did not start")
		return nil, ""
	}
}

// finishedRows reads the ids of the finished exchanges through a connection of its own (the
// child writes meanwhile; WAL lets a reader see the last commit).
func finishedRows(t *testing.T, path string) map[string]bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM exchanges WHERE state = 'finished'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// crashLoad sends rate requests per second (half streams) until stopped and keeps the ids of
// those that finished with 200.
type crashLoad struct {
	mu       sync.Mutex
	finished []string
	quit     chan struct{}
	wg       sync.WaitGroup
	client   *http.Client
}

func startLoad(url string, rate int) *crashLoad {
	l := &crashLoad{quit: make(chan struct{}), client: &http.Client{Transport: &http.Transport{MaxConnsPerHost: 128, MaxIdleConnsPerHost: 128}}}
	l.wg.Go(func() {
		start := time.Now()
		for sent := 0; ; {
			select {
			case <-l.quit:
				return
			default:
			}
			for due := int(time.Since(start).Seconds()*float64(rate)) + 1; sent < due; sent++ {
				i := sent
				l.wg.Go(func() { l.send(url, i) })
			}
			time.Sleep(time.Millisecond) // pacing the sender, not waiting for a result
		}
	})
	return l
}

func (l *crashLoad) send(url string, i int) {
	resp, err := l.client.Post(url+"/v1/messages", "application/json", strings.NewReader(messagesBody(i%2 == 0, "crash-"+strconv.Itoa(i%10))))
	if err != nil {
		return // the kill
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.StatusCode == http.StatusOK {
		l.mu.Lock()
		l.finished = append(l.finished, resp.Header.Get("Longhaul-Request-Id"))
		l.mu.Unlock()
	}
}

// done returns the ids finished so far.
func (l *crashLoad) done() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.finished...)
}

func (l *crashLoad) stop() {
	close(l.quit)
	l.wg.Wait()
	l.client.CloseIdleConnections()
}
