package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"longhaul/store/leaks"
)

// gitleaksKinds returns one secret of each kind the security issue named, in the text a
// coding agent's tool prints around it (a `cat .env`, a key file): realistic keys drawn from a
// fixed seed, nobody's.
func gitleaksKinds() (secrets []string, text string) {
	rng := rand.New(rand.NewPCG(7, 8))
	draw := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const upper, alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pem := "-----BEGIN OPENSSH PRIVATE KEY-----\n"
	for range 20 {
		pem += draw(alnum+"+/", 70) + "\n"
	}
	pem += "-----END OPENSSH PRIVATE KEY-----"
	secrets = []string{
		"AKIA" + draw(upper, 16),
		draw(alnum+"+/", 40),
		"ghp_" + draw(alnum, 36),
		"github_pat_" + draw(alnum, 22) + "_" + draw(alnum, 59),
		"xoxb-" + draw("0123456789", 12) + "-" + draw("0123456789", 13) + "-" + draw(alnum, 24),
		"eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSIsImV4cCI6MTcxNjIzOTAyMn0." + draw(alnum+"_-", 86),
		pem,
		draw(alnum, 12) + "Pw" + draw(alnum, 6),
		draw(alnum, 40),
		draw(alnum, 32),
	}
	text = fmt.Sprintf("$ cat .env\nAWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\nGITHUB_TOKEN=%s\n"+
		"GH_FINE_GRAINED=%s\nSLACK_BOT_TOKEN=%s\nSESSION=%s\n$ cat ~/.ssh/id_ed25519\n%s\n"+
		"DATABASE_URL=postgres://app:%s@db.internal:5432/app\nAPI_KEY=%s\n$ cat creds.csv\nservice_token,%s\n",
		secrets[0], secrets[1], secrets[2], secrets[3], secrets[4], secrets[5], secrets[6], secrets[7], secrets[8], secrets[9])
	return secrets, text
}

// ordinaryText is what must survive redaction untouched: code, and the hashes and ids a body
// is full of.
func ordinaryText() []string {
	return []string{
		"commit 3f2a9c1e0b7d4a6f8e5c2b1a0d9f8e7c6b5a4d3e",
		"6d0b8f3e-1111-4222-8333-944455556666",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
		"func (st *Store) LeakRules() *leaks.Rules { return st.leaks }",
	}
}

// survivors lists the secrets (or a 16-byte piece of one) found in b.
func survivors(b []byte, secrets []string) []string {
	var out []string
	for _, s := range secrets {
		s = strings.ReplaceAll(s, "\n", "")
		mid := s[len(s)/2-8 : len(s)/2+8]
		if bytes.Contains(b, []byte(s)) || bytes.Contains(b, []byte(mid)) {
			out = append(out, s[:12]+"…")
		}
	}
	return out
}

// TestPlantedSecretsReachNeitherTheFileNorTheExport: a session whose tool results hold every
// kind of secret coding agents print, in a small body (stored raw) and in large ones (chunked and
// compressed, the second scanned only where it differs from the first), and in an error
// message: none is in the database file or its WAL, none in any body once decompressed, none
// in the export; the ordinary text beside them is.
func TestPlantedSecretsReachNeitherTheFileNorTheExport(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	secrets, text := gitleaksKinds()
	result := toolResultJSON(text + strings.Join(ordinaryText(), "\n"))
	small := sessionExchange(0, `{"messages":[{"role":"user","content":[`+result+`]}]}`)
	small.SessionID = "other"
	base := growingSession(4)[3]
	base = base[:len(base)-2]
	turns := []string{
		base + `,{"role":"user","content":[` + toolResultJSON(strings.Repeat("ok\n", 10)) + `]}]}`,
		base + `,{"role":"user","content":[` + toolResultJSON(strings.Repeat("ok\n", 10)) + `]},{"role":"user","content":[` + result + `]}]}`,
	}
	small.ErrorMessage = "upstream said: bad token " + secrets[2]
	writeAll(t, st, small)
	for i, b := range turns {
		writeAll(t, st, sessionExchange(i+1, b))
	}
	var export bytes.Buffer
	if _, err := st.ExportExchanges(ctx, HistoryFilter{}, &export); err != nil {
		t.Fatal(err)
	}
	if s := survivors(export.Bytes(), secrets); len(s) > 0 {
		t.Errorf("the export holds %v", s)
	}
	for _, o := range ordinaryText() {
		if !bytes.Contains(export.Bytes(), []byte(strings.ReplaceAll(o, `"`, `\"`))) {
			t.Errorf("the export lost ordinary text %q", o)
		}
	}
	for _, blob := range storedBlobs(t, st) {
		if s := survivors(blob, secrets); len(s) > 0 {
			t.Errorf("a stored body holds %v", s)
		}
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if s := survivors(b, secrets); len(s) > 0 {
			t.Errorf("%s holds %v", path+suffix, s)
		}
	}
}

func toolResultJSON(text string) string {
	return `{"type":"tool_result","tool_use_id":"toolu_01","content":` + jsonString(text) + `}`
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

// storedBlobs returns every body and chunk as stored, decompressed: the file holds them
// deflated, where a plain search of its bytes would find nothing either way.
func storedBlobs(t *testing.T, st *Store) [][]byte {
	t.Helper()
	var out [][]byte
	rows, err := st.db.Query(`SELECT request, forwarded, reply FROM exchange_bodies UNION ALL SELECT data, NULL, NULL FROM body_chunks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var cols [3][]byte
		if err := rows.Scan(&cols[0], &cols[1], &cols[2]); err != nil {
			t.Fatal(err)
		}
		for _, c := range cols {
			if len(c) == 0 || c[0] == bodyChunked {
				continue
			}
			b, err := decompressAppend(nil, c)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 3 {
		t.Fatalf("%d stored bodies and chunks; the test needs the bodies it wrote", len(out))
	}
	return out
}

// TestRedactNewFindsSecretsAcrossTheSharedPart: wherever the part a body shares with its
// session's previous (clean) body ends — before a secret, inside it, inside the name it is
// assigned to — redacting only the rest (redactNew) gives what redacting the whole gives.
func TestRedactNewFindsSecretsAcrossTheSharedPart(t *testing.T) {
	rules, err := leaks.Gitleaks()
	if err != nil {
		t.Fatal(err)
	}
	red := redaction{leaks: rules}
	secrets, text := gitleaksKinds()
	filler := strings.Repeat(`{"type":"text","text":"func f(a, b []int) { return }"},`, 500)
	m := newBodyMemory()
	for i, secret := range secrets {
		// The lines of the tool's output around this secret alone.
		at := strings.Index(text, secret)
		from, to := strings.LastIndex(text[:at], "\n$ ")+1, at+len(secret)+1
		raw := []byte(`{"messages":[` + filler + toolResultJSON(text[from:to]) + `]}`)
		whole := red.redact(raw)
		if bytes.Equal(whole, raw) {
			t.Fatalf("secret %d: nothing masked; the test needs a secret the rules find", i)
		}
		checked := 0
		for same := len(filler) - 64; same < len(raw); same += 3 {
			if prefix := raw[:same]; !bytes.Equal(red.redact(prefix), prefix) {
				continue // the previous body would not have been clean
			}
			prev := &lastBody{exchange: "prev", size: same, clean: true}
			got, _, _ := m.redactNew(prev, raw, red, Repeats{Exchange: "prev", Bytes: same})
			if !bytes.Equal(got, whole) {
				t.Fatalf("secret %d, shared part of %d bytes: redactNew differs from redacting the whole body", i, same)
			}
			checked++
		}
		if checked < 20 {
			t.Errorf("secret %d: checked %d shared lengths; want the secret's every region", i, checked)
		}
	}
}
