package update

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"longhaul/app/internal/wait"
)

func TestRestartArgsDropMinimized(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--minimized"}, []string{}},
		{[]string{"--data-dir", "/d", "-minimized", "--port", "9000"}, []string{"--data-dir", "/d", "--port", "9000"}},
		{[]string{"--minimized=true", "--headless=false"}, []string{"--headless=false"}},
		{[]string{"--", "keep"}, []string{"--", "keep"}},
	} {
		if got := restartArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("restartArgs(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

const restartTestEnv = "LONGHAUL_RESTART_TEST_DIR"

// TestRestartHelperProcess plays both sides of a restart: the app that asks
// for it (spawns its successor, then takes a while to exit) and the successor
// (waits for it, then records that it started).
func TestRestartHelperProcess(t *testing.T) {
	dir := os.Getenv(restartTestEnv)
	if dir == "" {
		t.Skip("runs as the child of TestRestartWaitsForPredecessor")
	}
	if os.Getenv(restartAfterEnv) != "" { // the successor
		WaitForPredecessor()
		record := strconv.FormatInt(time.Now().UnixNano(), 10) + "\n" + strings.Join(os.Args[1:], " ")
		if err := os.WriteFile(filepath.Join(dir, "successor"), []byte(record), 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := spawnRestart(os.Args[0], []string{"-test.run=^TestRestartHelperProcess$", "-test.count=1", "--", "--minimized", "keep"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the proxy draining, the store closing
	if err := os.WriteFile(filepath.Join(dir, "predecessor"), []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestRestartWaitsForPredecessor(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), restartTestEnv+"="+dir)
	if err := cmd.Run(); err != nil { // stdout to /dev/null: the successor keeps it open
		t.Fatalf("predecessor: %v", err)
	}
	var succ []byte
	wait.Until(t, "the successor started", func() bool {
		var err error
		succ, err = os.ReadFile(filepath.Join(dir, "successor"))
		return err == nil
	})
	pred, err := os.ReadFile(filepath.Join(dir, "predecessor"))
	if err != nil {
		t.Fatal(err)
	}
	started, args, _ := strings.Cut(string(succ), "\n")
	s, _ := strconv.ParseInt(started, 10, 64)
	p, _ := strconv.ParseInt(string(pred), 10, 64)
	if s < p {
		t.Errorf("the successor went on %v before its predecessor finished", time.Duration(p-s))
	}
	if strings.Contains(args, "minimized") || !strings.HasSuffix(args, "-- keep") {
		t.Errorf("successor args %q; want the same without --minimized", args)
	}
}
