package app

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
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"longhaul/app/internal/releasetest"
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

func (f *updateFixture) updater(version string) *updater {
	return newUpdater(UpdateConfig{Repo: "acme/longhaul", APIURL: f.api, PublicKey: f.key.pubPEM, Executable: f.bin},
		version, slog.New(slog.DiscardHandler), nil)
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
	u := f.updater("1.0.0")
	u.publish = func(st UpdateStatus) { published = append(published, st.State) }
	if st := u.Status(); !st.Signed || st.State != UpdateOff {
		t.Fatalf("status before the setting = %+v; want off and signed", st)
	}
	u.setEnabled(true)
	start := time.Now()
	st, err := u.Check(context.Background())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("update applied in %v", time.Since(start).Round(time.Millisecond))
	if st.State != UpdateReady || st.Latest != "2.0.0" || !strings.Contains(st.Message, "restart") {
		t.Errorf("status = %+v; want ready for 2.0.0 with a restart message", st)
	}
	if want := []string{UpdateIdle, UpdateChecking, UpdateDownloading, UpdateReady}; strings.Join(published, ",") != strings.Join(want, ",") {
		t.Errorf("published states %v; want %v", published, want)
	}
	if got := strings.Join(f.gh.Downloads(), ","); got != f.name+",checksums.txt,checksums.txt.sig" {
		t.Errorf("downloaded %s; want the archive, checksums.txt and its signature", got)
	}
	f.assertBinary(t, "2.0.0")
	f.assertStillRunning(t)

	// Once installed, a second check does not download again.
	if st, err := u.Check(context.Background()); err != nil || st.State != UpdateReady {
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
	st, err := f.updater("1.0.0").Check(context.Background())
	if err == nil || st.State != UpdateFailed || st.Error == "" {
		t.Fatalf("Check = %+v, %v; want a failure", st, err)
	}
	t.Logf("refused: %v", err)
	f.assertBinary(t, "1.0.0")
	f.assertStillRunning(t)
}

func TestUpdateRejectsWrongSignature(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, newSigningKey(t)) // signed by a key that is not built in
	st, err := f.updater("1.0.0").Check(context.Background())
	if err == nil || st.State != UpdateFailed {
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
	st, err := f.updater("v2.0.0").Check(context.Background())
	if err != nil || st.State != UpdateUpToDate || st.Latest != "2.0.0" {
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
		cfg                UpdateConfig
	}{
		{"no release source", "1.0.0", "no release source", UpdateConfig{}},
		{"development build", "dev", "development build", UpdateConfig{Repo: "acme/longhaul"}},
		{"git describe version", "d19c552-dirty", "development build", UpdateConfig{Repo: "acme/longhaul"}},
		{"bad key", "1.0.0", "public key", UpdateConfig{Repo: "acme/longhaul", PublicKey: "not a key"}},
		{"signed", "1.0.0", "", UpdateConfig{Repo: "acme/longhaul", PublicKey: key.pubPEM}},
		{"signed, key in base64", "1.0.0", "", UpdateConfig{Repo: "acme/longhaul", PublicKey: base64.StdEncoding.EncodeToString([]byte(key.pubPEM))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpdater(tc.cfg, tc.version, slog.New(slog.DiscardHandler), nil)
			u.setEnabled(true)
			st := u.Status()
			if tc.why == "" {
				if st.State != UpdateIdle {
					t.Errorf("status = %+v; want idle", st)
				}
				return
			}
			if st.State != UpdateOff || !strings.Contains(st.Message, tc.why) {
				t.Errorf("status = %+v; want off saying %q", st, tc.why)
			}
			if _, err := u.Check(context.Background()); !errors.Is(err, ErrUpdatesOff) {
				t.Errorf("Check error = %v; want ErrUpdatesOff", err)
			}
		})
	}
}

// The loop checks when the setting turns on (at start) and every interval,
// and not at all while the setting is off.
func TestUpdateLoopFollowsTheSetting(t *testing.T) {
	f := newUpdateFixture(t)
	f.publish(t, f.archive, f.archive, f.key)
	u := newUpdater(UpdateConfig{Repo: "acme/longhaul", APIURL: f.api, PublicKey: f.key.pubPEM, Executable: f.bin,
		Interval: 100 * time.Millisecond}, "2.0.0", slog.New(slog.DiscardHandler), nil)
	lists := f.gh.Lists
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { u.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	time.Sleep(300 * time.Millisecond)
	if n := lists(); n != 0 {
		t.Fatalf("%d checks with the setting off; want none", n)
	}
	u.setEnabled(true)
	deadline := time.Now().Add(5 * time.Second)
	for lists() < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := lists(); n < 3 {
		t.Fatalf("%d checks in 5s with a 100ms interval; want at least 3 (one at once, then periodic)", n)
	}
	if st := u.Status(); st.State != UpdateUpToDate {
		t.Errorf("status = %+v; want up to date", st)
	}
	u.setEnabled(false)
	time.Sleep(150 * time.Millisecond) // a check in flight may finish
	n := lists()
	time.Sleep(350 * time.Millisecond)
	if m := lists(); m != n {
		t.Errorf("%d checks after the setting turned off; want none", m-n)
	}
}

// A "check now" while a check runs answers at once with the current state.
func TestUpdateCheckWhileChecking(t *testing.T) {
	gh := &releasetest.Server{Owner: "acme", Repo: "longhaul"}
	gh.Publish("v1.0.0")
	entered, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
			<-release // the first check hangs here
		default:
		}
		gh.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u := newUpdater(UpdateConfig{Repo: "acme/longhaul", APIURL: srv.URL + "/api/v3/"}, "1.0.0", slog.New(slog.DiscardHandler), nil)
	first := make(chan error, 1)
	go func() { _, err := u.Check(context.Background()); first <- err }()
	<-entered
	start := time.Now()
	st, err := u.Check(context.Background())
	if err != nil || st.State != UpdateChecking {
		t.Errorf("second Check = %+v, %v; want the running check's state, no error", st, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Check took %v; want it at once", d)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if st := u.Status(); st.State != UpdateUpToDate {
		t.Errorf("status = %+v; want up to date", st)
	}
}
