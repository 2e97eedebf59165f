package update

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"longhaul/app/internal/releasetest"
	"longhaul/app/internal/wait"
)

// tinyProgram is the stand-in for Longhaul in the self-update tests: it prints
// its version, or with "wait" stays running until stdin closes (to update a
// binary while it runs, as the app does).
const tinyProgram = `package main

import (
	"fmt"
	"io"
	"os"
)

var version = "0.0.0"

func main() {
	fmt.Println(version)
	if len(os.Args) > 1 && os.Args[1] == "wait" {
		io.Copy(io.Discard, os.Stdin)
		fmt.Println(version, "exits")
	}
}
`

// buildTiny builds tinyProgram with the given version into dir/longhaul.
func buildTiny(t *testing.T, version, dir string) string {
	t.Helper()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(tinyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "longhaul")
	cmd := exec.Command("go", "build", "-o", out, "-ldflags", "-X main.version="+version, "main.go")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tiny program %s: %v\n%s", version, err, b)
	}
	return out
}

func runVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	return strings.TrimSpace(string(out))
}

// tarGz packs one file named name.
func tarGz(t *testing.T, name string, content []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type signingKey struct {
	priv   *ecdsa.PrivateKey
	pubPEM string
}

func newSigningKey(t *testing.T) signingKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{priv, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
}

func (k signingKey) sign(t *testing.T, data []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// updateFixture is v1 installed (and running), v2 published.
type updateFixture struct {
	bin     string // the installed binary
	running *exec.Cmd
	stdin   interface{ Close() error }
	stdout  *bufio.Reader
	gh      *releasetest.Server
	api     string
	key     signingKey
	archive []byte // the v2 release archive as built
	name    string // its asset name
}

func newUpdateFixture(t *testing.T) *updateFixture {
	t.Helper()
	root := t.TempDir()
	bin := buildTiny(t, "1.0.0", filepath.Join(root, "install"))
	v2 := buildTiny(t, "2.0.0", filepath.Join(root, "v2"))
	v2bytes, err := os.ReadFile(v2)
	if err != nil {
		t.Fatal(err)
	}
	f := &updateFixture{bin: bin, gh: &releasetest.Server{Owner: "acme", Repo: "longhaul"}, key: newSigningKey(t)}
	f.name = fmt.Sprintf("longhaul_2.0.0_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH)
	f.archive = tarGz(t, "longhaul", v2bytes)
	srv := httptest.NewServer(f.gh)
	t.Cleanup(srv.Close)
	f.api = srv.URL + "/api/v3/"

	// v1 keeps running through the update, as the app does.
	cmd := exec.Command(bin, "wait")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.running, f.stdin, f.stdout = cmd, stdin, bufio.NewReader(stdout)
	if line, err := f.stdout.ReadString('\n'); err != nil || strings.TrimSpace(line) != "1.0.0" {
		t.Fatalf("v1 started with %q, %v", line, err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() }) //nolint:errcheck // best effort
	return f
}

// publish serves archive under the release with checksums.txt (of sumOf) and
// its signature by signer.
func (f *updateFixture) publish(t *testing.T, archive, sumOf []byte, signer signingKey) {
	t.Helper()
	sum := sha256.Sum256(sumOf)
	checksums := []byte(hex.EncodeToString(sum[:]) + "  " + f.name + "\n")
	f.gh.Publish("v2.0.0",
		releasetest.Asset{Name: f.name, Data: archive},
		releasetest.Asset{Name: "checksums.txt", Data: checksums},
		releasetest.Asset{Name: "checksums.txt.sig", Data: signer.sign(t, checksums)})
}

func (f *updateFixture) updater(version string, opts Options) *Updater {
	return New(Config{Repo: "acme/longhaul", APIURL: f.api, PublicKey: f.key.pubPEM, Executable: f.bin}, version, opts)
}

// assertUnchanged checks the installed binary is still v1, with no update
// leftovers beside it, and the running v1 is unaffected.
func (f *updateFixture) assertBinary(t *testing.T, want string) {
	t.Helper()
	if got := runVersion(t, f.bin); got != want {
		t.Errorf("installed binary reports %q; want %q", got, want)
	}
	entries, err := os.ReadDir(filepath.Dir(f.bin))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("install folder holds %v; want only longhaul", names)
	}
}

func (f *updateFixture) assertStillRunning(t *testing.T) {
	t.Helper()
	if err := f.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	line, err := f.stdout.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "1.0.0 exits" {
		t.Errorf("the running v1 ended with %q, %v; want it to keep running its own code", line, err)
	}
}

func TestUpdateReplacesBinaryWithVerifiedRelease(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, f.key)
	var published []string
	u := f.updater("1.0.0", Options{OnChange: func(st Status) { published = append(published, st.State) }})
	if st := u.Status(); !st.Signed || st.State != Off {
		t.Fatalf("status before the setting = %+v; want off and signed", st)
	}
	u.SetEnabled(true)
	start := time.Now()
	st, err := u.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("update applied in %v", time.Since(start).Round(time.Millisecond))
	if st.State != Ready || st.Latest != "2.0.0" || !strings.Contains(st.Message, "restart") {
		t.Errorf("status = %+v; want ready for 2.0.0 with a restart message", st)
	}
	if want := []string{Idle, Checking, Downloading, Ready}; strings.Join(published, ",") != strings.Join(want, ",") {
		t.Errorf("published states %v; want %v", published, want)
	}
	if got := strings.Join(f.gh.Downloads(), ","); got != f.name+",checksums.txt,checksums.txt.sig" {
		t.Errorf("downloaded %s; want the archive, checksums.txt and its signature", got)
	}
	f.assertBinary(t, "2.0.0")
	f.assertStillRunning(t)

	// Once installed, a second check does not download again.
	if st, err := u.Check(context.Background()); err != nil || st.State != Ready {
		t.Errorf("second Check = %+v, %v; want ready, no error", st, err)
	}
	if len(f.gh.Downloads()) != 3 {
		t.Errorf("second check downloaded again: %v", f.gh.Downloads())
	}
}

func TestUpdateRejectsTamperedArchive(t *testing.T) {
	f := newUpdateFixture(t)
	tampered := bytes.Clone(f.archive)
	tampered[len(tampered)/2] ^= 0xff
	f.publish(t, tampered, f.archive, f.key) // checksums.txt (validly signed) lists the real archive
	st, err := f.updater("1.0.0", Options{}).Check(context.Background())
	if err == nil || st.State != Failed || st.Error == "" {
		t.Fatalf("Check = %+v, %v; want a failure", st, err)
	}
	t.Logf("refused: %v", err)
	f.assertBinary(t, "1.0.0")
	f.assertStillRunning(t)
}

func TestUpdateRejectsWrongSignature(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, newSigningKey(t)) // signed by a key that is not built in
	st, err := f.updater("1.0.0", Options{}).Check(context.Background())
	if err == nil || st.State != Failed {
		t.Fatalf("Check = %+v, %v; want a failure", st, err)
	}
	if !strings.Contains(err.Error(), "ECDSA") {
		t.Errorf("error %q does not name the signature check", err)
	}
	f.assertBinary(t, "1.0.0")
}

func TestUpdateUpToDate(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, f.key)
	st, err := f.updater("v2.0.0", Options{}).Check(context.Background())
	if err != nil || st.State != UpToDate || st.Latest != "2.0.0" {
		t.Fatalf("Check = %+v, %v; want up to date at 2.0.0", st, err)
	}
	if len(f.gh.Downloads()) != 0 {
		t.Errorf("downloaded %v; want nothing", f.gh.Downloads())
	}
	f.assertBinary(t, "1.0.0")
}

func TestUpdateOff(t *testing.T) {
	key := newSigningKey(t)
	for _, tc := range []struct {
		name, version, why string
		cfg                Config
	}{
		{"no release source", "1.0.0", "no release source", Config{}},
		{"development build", "dev", "development build", Config{Repo: "acme/longhaul"}},
		{"git describe version", "d19c552-dirty", "development build", Config{Repo: "acme/longhaul"}},
		{"bad key", "1.0.0", "public key", Config{Repo: "acme/longhaul", PublicKey: "not a key"}},
		{"signed", "1.0.0", "", Config{Repo: "acme/longhaul", PublicKey: key.pubPEM}},
		{"signed, key in base64", "1.0.0", "", Config{Repo: "acme/longhaul", PublicKey: base64.StdEncoding.EncodeToString([]byte(key.pubPEM))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := New(tc.cfg, tc.version, Options{})
			u.SetEnabled(true)
			st := u.Status()
			if tc.why == "" {
				if st.State != Idle {
					t.Errorf("status = %+v; want idle", st)
				}
				return
			}
			if st.State != Off || !strings.Contains(st.Message, tc.why) {
				t.Errorf("status = %+v; want off saying %q", st, tc.why)
			}
			if _, err := u.Check(context.Background()); !errors.Is(err, ErrOff) {
				t.Errorf("Check error = %v; want ErrOff", err)
			}
		})
	}
}

// The loop checks when the setting turns on (at start) and at every tick of
// its interval, and not at all while the setting is off. The test steps the
// loop with its own ticks and waits for each turn to finish, so every count
// is exact.
func TestUpdateLoopFollowsTheSetting(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, f.key)
	u := New(Config{Repo: "acme/longhaul", APIURL: f.api, PublicKey: f.key.pubPEM, Executable: f.bin}, "2.0.0", Options{})
	lists := f.gh.Lists
	ticks, turned := make(chan time.Time), make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { u.run(ctx, ticks, turned); close(done) }()
	defer func() { cancel(); <-done }()
	tick := func(n int) {
		t.Helper()
		for range n {
			ticks <- time.Now()
			wait.Receive(t, "the loop's turn after a tick", turned)
		}
	}

	tick(3)
	if n := lists(); n != 0 {
		t.Fatalf("%d checks with the setting off; want none", n)
	}
	u.SetEnabled(true)
	wait.Receive(t, "the loop's turn after the setting turned on", turned)
	if n := lists(); n != 1 {
		t.Fatalf("%d checks once the setting is on; want 1", n)
	}
	tick(2)
	if n := lists(); n != 3 {
		t.Fatalf("%d checks after two ticks; want 3 (one when turned on, one per tick)", n)
	}
	if st := u.Status(); st.State != UpToDate {
		t.Errorf("status = %+v; want up to date", st)
	}
	u.SetEnabled(false)
	tick(3)
	if n := lists(); n != 3 {
		t.Errorf("%d checks after the setting turned off; want none", n-3)
	}
}

// Without ticks of its own, the loop checks every Config.Interval.
func TestUpdateLoopChecksEveryInterval(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, f.key)
	u := New(Config{Repo: "acme/longhaul", APIURL: f.api, PublicKey: f.key.pubPEM, Executable: f.bin,
		Interval: 10 * time.Millisecond}, "2.0.0", Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { u.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	u.SetEnabled(true)
	wait.Until(t, "three checks (one when turned on, then periodic)", func() bool { return f.gh.Lists() >= 3 })
}

// A "check now" while a check runs answers at once with the current state.
func TestUpdateCheckWhileChecking(t *testing.T) {
	gh := &releasetest.Server{Owner: "acme", Repo: "longhaul"}
	gh.Publish("v1.0.0")
	// The first request to arrive hangs until release closes, whenever it arrives: a send that
	// gave up when the test was not yet receiving let the first check through unhung, and the
	// test then waited for it forever (seen once in CI under load).
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var hung atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hung.CompareAndSwap(false, true) {
			entered <- struct{}{}
			<-release // the first check hangs here
		}
		gh.ServeHTTP(w, r)
	}))
	var releaseOnce sync.Once
	unhang := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(srv.Close)
	t.Cleanup(unhang) // runs first: a test that failed early does not leave the handler hung
	u := New(Config{Repo: "acme/longhaul", APIURL: srv.URL + "/api/v3/"}, "1.0.0", Options{})
	first := make(chan error, 1)
	go func() { _, err := u.Check(context.Background()); first <- err }()
	<-entered
	// The first check hangs until release closes: the second can only
	// return if it does not wait for the first.
	type result struct {
		st  Status
		err error
	}
	second := make(chan result, 1)
	go func() { st, err := u.Check(context.Background()); second <- result{st, err} }()
	r, _ := wait.Receive(t, "the second Check (it waited for the first)", second)
	if r.err != nil || r.st.State != Checking {
		t.Errorf("second Check = %+v, %v; want the running check's state, no error", r.st, r.err)
	}
	unhang()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if st := u.Status(); st.State != UpToDate {
		t.Errorf("status = %+v; want up to date", st)
	}
}
