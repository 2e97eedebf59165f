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
	"time"
)

// growingSession builds the request bodies of a Claude Code session of turns turns: a fixed
// head (system prompt, tools), then one ~8 KB tool round per turn (text that compresses about
// as real tool output does), then the turn's last user message carrying the cache_control
// breakpoint, which moves every turn. Body k repeats body k-1 but for its tail, as a client
// that resends the conversation does; the last is ~800 KB.
func growingSession(turns int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return struct error value context store body chunk session request reply " +
		"stream token cache model account proxy layer history retention sweep byte index table write read " +
		"the a of to in is for on with that this it be as at by from")
	var head strings.Builder
	head.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,"metadata":{"user_id":"user_session_4f1c"},`)
	head.WriteString(`"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],"tools":[`)
	for i := range 25 {
		fmt.Fprintf(&head, `{"name":"Tool%02d","description":%q,"input_schema":{"type":"object"}},`, i, strings.Repeat("Operates on the workspace. ", 40))
	}
	head.WriteString(`{"name":"Last","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"Fix the failing tests."}`)
	var rounds strings.Builder
	bodies := make([]string, 0, turns)
	for turn := range turns {
		var text strings.Builder
		for text.Len() < 7800 {
			text.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				fmt.Fprintf(&text, " %d\n", rng.IntN(100000))
			} else {
				text.WriteByte(' ')
			}
		}
		content, _ := json.Marshal(text.String())
		fmt.Fprintf(&rounds, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%04d","name":"Tool01","input":{"path":"f%d.go"}}]}`, turn, turn)
		fmt.Fprintf(&rounds, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":%s}]}`, turn, content)
		last := fmt.Sprintf(`,{"role":"user","content":[{"type":"text","text":"continue (turn %d)","cache_control":{"type":"ephemeral"}}]}]}`, turn)
		bodies = append(bodies, head.String()+rounds.String()+last)
	}
	return bodies
}

func sessionExchange(i int, body string) Exchange {
	e := fullExchange(i, testNow.Add(time.Duration(i)*time.Minute))
	e.SessionID = "sess-growing"
	e.Bodies = &Bodies{Request: body, Reply: fmt.Sprintf(`{"id":"msg_%d","content":[{"type":"text","text":"turn %d done"}]}`, i, i)}
	if i%7 == 3 { // now and then the proxy rewrote the request: a second large body
		e.Bodies.Forwarded = body[:len(body)/2] + "]}"
	}
	return e
}

// checkBodies reads every exchange i in [from, to) back and compares its bodies byte for byte.
func checkBodies(t *testing.T, st *Store, bodies []string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		e, err := st.Exchange(context.Background(), fmt.Sprintf("lh_%06d", i))
		if err != nil {
			t.Fatalf("Exchange(%d): %v", i, err)
		}
		want := sessionExchange(i, bodies[i]).Bodies
		if e.Bodies == nil || e.Bodies.Request != want.Request || e.Bodies.Reply != want.Reply || e.Bodies.Forwarded != want.Forwarded {
			t.Fatalf("exchange %d: bodies differ from what was written (request %d bytes; want %d)", i, len(e.Bodies.Request), len(want.Request))
		}
	}
}

// TestGrowingSessionStoresWhatIsNew writes a 100-turn session of requests growing to ~800 KB,
// one batch per turn as the recorder does, and checks that the history grows by less than 3×
// the last body (not by the sum of all of them), that every body reads back byte-identical —
// after retention deleted older exchanges too — and that export gives the same bytes. It runs
// twice: bodies given whole to the batch, and digested ahead of it (DigestRequest), which is how
// the recorder hands over a large request body.
func TestGrowingSessionStoresWhatIsNew(t *testing.T) {
	for _, digest := range []bool{false, true} {
		name := "whole"
		if digest {
			name = "digested"
		}
		t.Run(name, func(t *testing.T) { checkGrowingSessionStoresWhatIsNew(t, digest) })
	}
}

func checkGrowingSessionStoresWhatIsNew(t *testing.T, digest bool) {
	st, path := openTemp(t)
	turn := func(i int, body string) Exchange {
		if digest {
			return digested(t, st, i, body)
		}
		return sessionExchange(i, body)
	}
	ctx := context.Background()
	if _, err := st.EnableIncrementalVacuum(ctx); err != nil {
		t.Fatal(err)
	}
	bodies := growingSession(100)
	last := len(bodies[len(bodies)-1])
	sum := 0
	for _, b := range bodies {
		sum += len(b)
	}
	if err := st.releaseSpace(ctx); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)
	for i, b := range bodies {
		writeAll(t, st, turn(i, b))
	}
	if err := st.releaseSpace(ctx); err != nil { // the WAL into the file
		t.Fatal(err)
	}
	grown := fileSize(t, path) - before
	t.Logf("100 turns, last body %d bytes, all bodies %d bytes: the file grew by %d bytes = %.2f× the last body (%.1f%% of the sum); %d chunks",
		last, sum, grown, float64(grown)/float64(last), 100*float64(grown)/float64(sum), countRows(t, st, "body_chunks"))
	if last < 750_000 {
		t.Fatalf("last body is %d bytes; the test wants an 800 KB-class session", last)
	}
	if grown >= int64(3*last) {
		t.Errorf("history grew by %d bytes; want < 3× the last body (%d)", grown, 3*last)
	}
	checkBodies(t, st, bodies, 0, len(bodies))

	// Retention deletes the first 60 exchanges (by age); the chunks only they used go, the
	// shared ones stay and the remaining bodies still read back whole.
	chunksBefore := countRows(t, st, "body_chunks")
	st.Now = func() time.Time { return testNow.Add(60*time.Minute - time.Second + 24*time.Hour) }
	res, err := st.ApplyRetention(ctx, Retention{MetadataAge: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExchangesDeleted != 60 {
		t.Fatalf("ApplyRetention = %+v; want the 60 oldest exchanges deleted", res)
	}
	if n := countRows(t, st, "body_chunks"); n >= chunksBefore || n == 0 {
		t.Errorf("chunks after retention = %d (before %d); want the unshared ones swept and the shared kept", n, chunksBefore)
	}
	checkBodies(t, st, bodies, 60, 100)

	// A new turn after the sweep (the writer remembered ids from before it) is still whole.
	more := growingSession(101)
	writeAll(t, st, turn(100, more[100]))
	checkBodies(t, st, more, 60, 101)

	var out bytes.Buffer
	n, err := st.ExportExchanges(ctx, HistoryFilter{}, &out)
	if err != nil || n != 41 {
		t.Fatalf("ExportExchanges = %d, %v; want 41 exchanges", n, err)
	}
	dec := json.NewDecoder(&out)
	for i := 60; i <= 100; i++ {
		var e Exchange
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		if e.ID != fmt.Sprintf("lh_%06d", i) || e.Bodies == nil || e.Bodies.Request != more[i] {
			t.Fatalf("exported exchange %s: request body differs from what was written", e.ID)
		}
	}
}

// TestBodyAgeRetentionKeepsSharedChunks drops the bodies (not the exchanges) of the older half
// of a session: the newer bodies share most of their chunks and must still read back whole.
func TestBodyAgeRetentionKeepsSharedChunks(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	bodies := growingSession(20)
	for i, b := range bodies {
		writeAll(t, st, sessionExchange(i, b))
	}
	st.Now = func() time.Time { return testNow.Add(10*time.Minute - time.Second + time.Hour) }
	res, err := st.ApplyRetention(ctx, Retention{BodyAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.BodiesDeleted != 10 || res.ExchangesDeleted != 0 {
		t.Fatalf("ApplyRetention = %+v; want the 10 oldest bodies deleted", res)
	}
	for i := range 10 {
		if e, err := st.Exchange(ctx, fmt.Sprintf("lh_%06d", i)); err != nil || e.Bodies != nil {
			t.Fatalf("exchange %d after body retention: bodies %v, %v; want none", i, e.Bodies != nil, err)
		}
	}
	checkBodies(t, st, bodies, 10, 20)
}

// TestChunksAreSharedAcrossSessions writes the same large body under two sessions and in two
// stores on one file (as two processes would): it is stored once, and a sweep by the other
// store does not leave the first one referring to chunks that are gone.
func TestChunksAreSharedAcrossSessions(t *testing.T) {
	st, path := openTemp(t)
	other, _ := openAt(t, path)
	ctx := context.Background()
	body := growingSession(10)[9]
	e0 := sessionExchange(0, body)
	writeAll(t, st, e0)
	chunks := countRows(t, st, "body_chunks")
	e1 := sessionExchange(1, body)
	e1.SessionID = "another-session"
	writeAll(t, st, e1)
	if n := countRows(t, st, "body_chunks"); n != chunks {
		t.Errorf("chunks after the same body in another session = %d; want %d (shared)", n, chunks)
	}
	// The other store deletes both bodies and sweeps every chunk; the first store then writes
	// the same body of the same session again: it must store the chunks anew.
	if _, err := other.db.Exec(`DELETE FROM exchange_bodies`); err != nil {
		t.Fatal(err)
	}
	if n, err := other.sweepChunks(ctx); err != nil || n != int64(chunks) {
		t.Fatalf("sweepChunks = %d, %v; want all %d chunks", n, err, chunks)
	}
	writeAll(t, st, sessionExchange(2, body))
	got, err := st.Exchange(ctx, "lh_000002")
	if err != nil || got.Bodies == nil || got.Bodies.Request != body {
		t.Fatalf("body written after another process's sweep does not read back whole: %v", err)
	}
}

// TestBodiesWrittenBeforeChunkingStayReadable: rows of the former format (a whole DEFLATE or
// raw body in exchange_bodies) read back as before, beside chunked ones.
func TestBodiesWrittenBeforeChunkingStayReadable(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	e := fullExchange(0, testNow)
	e.Bodies = nil
	writeAll(t, st, e)
	big := strings.Repeat(`{"role":"user","content":"an old body, stored whole"},`, 1000)
	whole, err := compress(nil, []byte(big))
	if err != nil || whole[0] != bodyDeflate {
		t.Fatalf("compress = format %d, %v", whole[0], err)
	}
	small, _ := compress(nil, []byte(`{"small":true}`))
	if _, err := st.db.Exec(`INSERT INTO exchange_bodies (exchange_seq, request, forwarded, reply) SELECT seq, ?, NULL, ? FROM exchanges`, whole, small); err != nil {
		t.Fatal(err)
	}
	got, err := st.Exchange(ctx, e.ID)
	if err != nil || got.Bodies == nil || got.Bodies.Request != big || got.Bodies.Reply != `{"small":true}` {
		t.Fatalf("legacy bodies read back as %v, %v; want the stored bytes", got.Bodies != nil, err)
	}
}

// TestChunkBoundariesFollowContent: an insertion near the start of a body changes only the
// chunks around it, so the rest are found again.
func TestChunkBoundariesFollowContent(t *testing.T) {
	body := []byte(growingSession(40)[39])
	cuts := func(b []byte) map[string]bool {
		out := map[string]bool{}
		for len(b) > 0 {
			n := nextCut(b)
			if n < min(len(b), chunkMin) || n > chunkMax {
				t.Fatalf("chunk of %d bytes; want within [%d, %d]", n, chunkMin, chunkMax)
			}
			out[string(b[:n])] = true
			b = b[n:]
		}
		return out
	}
	a := cuts(body)
	edited := append(append(append([]byte{}, body[:50_000]...), "an inserted sentence"...), body[50_000:]...)
	b := cuts(edited)
	shared := 0
	for c := range b {
		if a[c] {
			shared++
		}
	}
	if shared < len(a)-3 {
		t.Errorf("after a 20-byte insertion %d of %d chunks are unchanged; want all but the ones around it", shared, len(a))
	}
}

// TestRedactSplitAtStructuralBytes is what redactNew relies on: cut after '{', '}', '[', ']'
// or ',', a text redacts to the same bytes whole or in two parts, because no pattern of
// redact.go spans such a byte. It plants every kind of secret around such bytes.
func TestRedactSplitAtStructuralBytes(t *testing.T) {
	texts := []string{
		`{"x-api-key":"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA-wxyz"},{"k":"AIzaSyBBBBBBBBBBBBBBBBBBBBBBBBBBB"}`,
		`[{"authorization":"Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"},"api_key=CCCCCCCCCCCCCCCCCC",{"apikey": "DDDDDDDDDDDDDDDD"}]`,
		`{"text":"sk-proj-EEEEEEEEEEEEEEEEEEEE,sk-ant-FFFFFFFFFFFFFFFFFFFF]Bearer GGGGGGGGGGGGGGGGGGGG}api-key:HHHHHHHHHHHHHHHH"}`,
		`{"a":"task-1234567890123456","b":"bearers,api-keys[sk-short]"}`,
	}
	for _, text := range texts {
		whole := string(Redact([]byte(text)))
		if whole == text && !strings.Contains(text, "task-") {
			t.Fatalf("Redact(%q) masked nothing; the test needs secrets it masks", text)
		}
		for c := 1; c < len(text); c++ {
			if !strings.ContainsRune("{}[],", rune(text[c-1])) {
				continue
			}
			split := string(Redact([]byte(text[:c]))) + string(Redact([]byte(text[c:])))
			if split != whole {
				t.Errorf("Redact split after byte %d (%q) = %q; whole = %q", c, text[c-1], split, whole)
			}
		}
	}
}

// TestSessionBodiesAreRedactedWhereTheyDiffer: the writer redacts only what a body does not
// share with the previous one of its session; a key that arrives in the new part, even one
// that starts in the shared bytes, and a key in the shared part of a body whose predecessor
// had one, are masked in the store and never reach the file.
func TestSessionBodiesAreRedactedWhereTheyDiffer(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	base := growingSession(4)[3]
	base = base[:len(base)-2] // open the messages array again
	const key = "sk-ant-api03-SECRETsecretSECRETsecret-abcd"
	bodies := []string{
		base + `,{"role":"user","content":"token: sk-ant-"}]}`, // clean: "ant-" is too short to be a key
		base + `,{"role":"user","content":"token: ` + key + `"}]}`,
		base + `,{"role":"user","content":"token: ` + key + `"},{"role":"user","content":"again"}]}`,
	}
	for i, b := range bodies {
		writeAll(t, st, sessionExchange(i, b))
	}
	for i := range bodies {
		e, err := st.Exchange(ctx, fmt.Sprintf("lh_%06d", i))
		if err != nil {
			t.Fatal(err)
		}
		want := string(Redact([]byte(bodies[i])))
		if e.Bodies == nil || e.Bodies.Request != want {
			t.Fatalf("body %d stored as %d bytes; want Redact of it (%d bytes)", i, len(e.Bodies.Request), len(want))
		}
		if i > 0 && strings.Contains(e.Bodies.Request, key) {
			t.Errorf("body %d holds the planted key", i)
		}
	}
	if err := st.releaseSpace(ctx); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err == nil && bytes.Contains(b, []byte("SECRETsecret")) {
			t.Errorf("%s holds the planted key", path+suffix)
		}
	}
}

// BenchmarkWriteSessionTurn is the writer's cost for one turn of a long session: an 800 KB
// request that repeats the previous one but for its last turn, with a small reply, in its own
// batch (as the recorder writes under a steady stream of large requests).
func BenchmarkWriteSessionTurn(b *testing.B) {
	st, _ := openTemp(b)
	bodies := growingSession(100)
	for i := range 90 { // the session so far
		writeAll(b, st, sessionExchange(i, bodies[i]))
	}
	next := 90
	b.SetBytes(int64(len(bodies[99])))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		// Turns 90–99 again and again: each differs from the previous one stored in its tail.
		writeAll(b, st, sessionExchange(next, bodies[90+next%10]))
		next++
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(next-90), "cpu-ns/turn")
}

// BenchmarkWriteDigestedSessionTurn is BenchmarkWriteSessionTurn as the recorder does it for a
// large request: the body digested at the hand-off, with what it repeats of the previous turn
// and where its messages end as the proxy found them, then its batch of one.
func BenchmarkWriteDigestedSessionTurn(b *testing.B) {
	st, _ := openTemp(b)
	bodies := growingSession(100)
	for i := range 90 {
		writeAll(b, st, sessionExchange(i, bodies[i]))
	}
	// What the proxy finds as a body arrives, outside the clock: turn 90+k after the turn
	// before it (turn 90 after 99, which it repeats up to 90's last message).
	var repeats [10]int
	var ends [10][]int
	for k := range 10 {
		repeats[k] = commonPrefix(bodies[90+(k+9)%10], bodies[90+k])
		ends[k] = messageEnds(bodies[90+k])
	}
	prev := fmt.Sprintf("lh_%06d", 89)
	next := 90
	b.SetBytes(int64(len(bodies[99])))
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		k := next % 10
		e := sessionExchange(next, bodies[90+k])
		e.Bodies.Forwarded = ""
		e.Bodies.RequestRepeats = Repeats{Exchange: prev, Bytes: repeats[k]}
		e.Bodies.RequestMessageEnds = ends[k]
		if err := st.DigestRequest(&e); err != nil {
			b.Fatal(err)
		}
		writeAll(b, st, e)
		prev = e.ID
		next++
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(next-90), "cpu-ns/turn")
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// messageEnds are the offsets just after each message of a growingSession body.
func messageEnds(body string) []int {
	var ends []int
	for i := 0; ; {
		j := strings.Index(body[i:], `},{"role"`)
		if j < 0 {
			return ends
		}
		i += j + 1
		ends = append(ends, i)
	}
}

// A secret configured after a session began is masked in that session's next bodies too,
// though it sits in the prefix they share with bodies scanned before it was known.
func TestSessionBodiesAreRedactedOfSecretsConfiguredMidSession(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	base := growingSession(4)[3]
	base = base[:len(base)-2]                 // open the messages array again
	const secret = "plainSECRETvalue7dE3qK9z" // no key shape: masked only once it is known
	first := base + `,{"role":"user","content":"token: ` + secret + `"}]}`
	second := first[:len(first)-2] + `,{"role":"user","content":"next"}]}`
	writeAll(t, st, sessionExchange(0, first))
	if _, err := st.AddAccount(ctx, Account{Label: "later", BaseURL: "https://api.example.com", Secret: secret, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	writeAll(t, st, sessionExchange(1, second))
	e, err := st.Exchange(ctx, "lh_000001")
	if err != nil {
		t.Fatal(err)
	}
	if e.Bodies == nil || strings.Contains(e.Bodies.Request, secret) || len(e.Bodies.Request) < len(base) {
		t.Fatalf("second body (%d bytes) holds the secret configured before it was written", len(e.Bodies.Request))
	}
}

// smallExchange is one ~1 KB request as the recorder hands it to the store under many
// concurrent small requests: one attempt, no compaction, a short reply. Its id is made as the
// proxy makes them (newExchangeID): its start in Unix nanoseconds, then 32 random bits, so a
// new row's id lands at the end of the id index.
func smallExchange(i int) Exchange {
	start := testNow.Add(time.Duration(i) * time.Millisecond)
	return Exchange{
		ID: fmt.Sprintf("lh_%016x%08x", uint64(start.UnixNano()), uint32(uint64(i)*0x9E3779B97F4A7C15>>32)), State: "finished", Route: "messages", Method: "POST", Path: "/v1/messages",
		UserAgent: "Go-http-client/1.1", RemoteAddr: "127.0.0.1:41234", SessionID: "6d0b8f3e-1111-4222-8333-944455556666",
		Model: "claude-sonnet-4-5-20250929", ModelSent: "claude-sonnet-4-5-20250929",
		AccountID: 1, AccountName: "bench", Start: start, FirstByte: start.Add(300 * time.Microsecond), End: start.Add(400 * time.Microsecond),
		Duration: 400 * time.Microsecond, TTFB: 300 * time.Microsecond, Status: 200, StopReason: "end_turn",
		InputTokens: 12, OutputTokens: 8, BytesIn: 1024, BytesOut: 310, Layers: []string{}, ToolUseIDs: []string{},
		Attempts: []Attempt{{AccountID: 1, AccountName: "bench", Status: 200, Start: start, Duration: 350 * time.Microsecond}},
		Bodies: &Bodies{
			Request: `{"model":"claude-sonnet-4-5-20250929","max_tokens":1024,"stream":false,"metadata":{"user_id":"user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"},"messages":[{"role":"user","content":"` +
				strings.Repeat("Summarise the change in this diff. ", 24) + `"}]}`,
			Reply: fmt.Sprintf(`{"id":"msg_%08d","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"Hello from the benchmark."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":8}}`, i),
		},
	}
}

// BenchmarkWriteSmallExchanges is the writer's cost per exchange under many small requests
// (a tick's batch of 256 ~1 KB exchanges, as at concurrency 32): rows, bodies, redaction.
func BenchmarkWriteSmallExchanges(b *testing.B) {
	st, _ := openTemp(b)
	const batch = 256
	next := 0
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		ex := make([]Exchange, batch)
		for i := range ex {
			ex[i] = smallExchange(next)
			next++
		}
		writeAll(b, st, ex...)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(next), "ns/exchange")
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(next), "cpu-ns/exchange")
}

// TestSessionBodiesThatDifferInsideTheSharedPart: the writer finds what a body shares with the
// previous one of its session from hashes of 4 KiB blocks; bodies that differ from it in one
// byte deep inside (an edited early message), at every offset within a block, that are
// shorter (a compacted request) or that repeat it whole and go on, all read back
// byte-identical, in one batch and across batches.
func TestSessionBodiesThatDifferInsideTheSharedPart(t *testing.T) {
	st, _ := openTemp(t)
	base := growingSession(40)[39]
	edit := func(at int, b byte) string { return base[:at] + string(b) + base[at+1:] }
	bodies := []string{
		base,
		edit(100_000, '#'),        // one byte inside the shared part
		edit(100_000+4095, '#'),   // the last byte of a block
		edit(4096, '#'),           // the first byte of a block
		edit(len(base)-1, ' '),    // the last byte
		base[:len(base)/2] + "]}", // shorter
		base[:len(base)/2] + "]}", // the same again
		base + base[:20_000],      // all of the previous one repeated, and more
		base,
	}
	for i, b := range bodies {
		writeAll(t, st, sessionExchange(i, b))
	}
	checkBodies(t, st, bodies, 0, len(bodies))
	batch := make([]Exchange, len(bodies))
	for i, b := range bodies {
		batch[i] = sessionExchange(len(bodies)+i, b)
	}
	writeAll(t, st, batch...)
	checkBodies(t, st, append(bodies, bodies...), len(bodies), 2*len(bodies))
}

// TestSessionBodiesWithTheProxysRepeats: the proxy says how much of a request repeats another
// exchange's (it compared them as the body arrived). The writer takes that instead of hashing
// the shared part when it names the body the writer remembers as the session's previous one,
// and hashes otherwise (a hint naming another exchange, or none); every body reads back
// byte-identical either way.
func TestSessionBodiesWithTheProxysRepeats(t *testing.T) {
	st, _ := openTemp(t)
	bodies := growingSession(30)
	bodies[20] = bodies[20][:60_000] + "#" + bodies[20][60_001:] // an early message edited
	common := func(a, b string) int {
		n := 0
		for n < min(len(a), len(b)) && a[n] == b[n] {
			n++
		}
		return n
	}
	taken := 0
	for i, b := range bodies {
		e := sessionExchange(i, b)
		switch {
		case i == 0:
		case i%5 == 4: // a hint about an exchange the writer does not remember as the previous
			e.Bodies.RequestRepeats = Repeats{Exchange: "lh_elsewhere", Bytes: common(bodies[i-1], b)}
		case i%5 == 2: // no hint: the proxy found nothing (or did not look)
		default:
			e.Bodies.RequestRepeats = Repeats{Exchange: fmt.Sprintf("lh_%06d", i-1), Bytes: common(bodies[i-1], b)}
			taken++
		}
		writeAll(t, st, e)
	}
	checkBodies(t, st, bodies, 0, len(bodies))
	if got := st.bodies.repeatsTaken; got != int64(taken) {
		t.Errorf("the writer took %d of the proxy's repeats; want the %d that name the previous body", got, taken)
	}
}

// repetitiveSession is growingSession's shape with tool output whose rolling hash finds no
// chunk cut (a file of one repeated line), and the message ends the proxy would report.
func repetitiveSession(turns int) (bodies []string, ends [][]int) {
	head := `{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":"Fix the failing tests."}`
	var rounds strings.Builder
	var roundEnds []int
	for turn := range turns {
		out, _ := json.Marshal(strings.Repeat(fmt.Sprintf("%6d\tfunc line%d() { return nil }\n", turn, turn), 140))
		fmt.Fprintf(&rounds, `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%04d","name":"Read","input":{}}]}`, turn)
		roundEnds = append(roundEnds, len(head)+rounds.Len())
		fmt.Fprintf(&rounds, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%04d","content":%s}]}`, turn, out)
		roundEnds = append(roundEnds, len(head)+rounds.Len())
		last := fmt.Sprintf(`,{"role":"user","content":"continue (turn %d)"}`, turn)
		body := head + rounds.String() + last + `],"metadata":{"user_id":"user_session_9a"}}`
		e := append([]int{len(`{"model":"claude-sonnet-4-5","max_tokens":32000,"messages":[{"role":"user","content":"Fix the failing tests."}`)}, roundEnds...)
		bodies, ends = append(bodies, body), append(ends, append(e, len(head)+rounds.Len()+len(last)))
	}
	return bodies, ends
}

// TestSessionBodiesCutAtMessageEnds: with the message ends and repeats the proxy reports, the
// writer cuts chunks at message ends, so each turn chunks (hashes, compresses) only about what
// it adds — at most chunkMin bytes of what it repeats — even where the text gives the rolling
// hash no cut; the bodies read back byte-identical. Without them the same session chunks far
// more.
func TestSessionBodiesCutAtMessageEnds(t *testing.T) {
	bodies, ends := repetitiveSession(30)
	chunkedPerTurn := func(withEnds bool) (over int, total int64) {
		st, _ := openTemp(t)
		for i, b := range bodies {
			before := st.bodies.chunked
			e := sessionExchange(i, b)
			e.Bodies.Forwarded = ""
			shared := 0
			for i > 0 && shared < len(b) && shared < len(bodies[i-1]) && b[shared] == bodies[i-1][shared] {
				shared++
			}
			if withEnds {
				// As the proxy reports them: the ends, and the previous body repeated through
				// its last message this one repeats whole.
				e.Bodies.RequestMessageEnds = ends[i]
				for _, end := range ends[i] {
					if i > 0 && end <= shared {
						e.Bodies.RequestRepeats = Repeats{Exchange: fmt.Sprintf("lh_%06d", i-1), Bytes: end}
					}
				}
			}
			writeAll(t, st, e)
			if i == 0 || len(bodies[i-1]) < minChunked { // a body stored whole has no chunks to reuse
				continue
			}
			// The reply is chunked too when large; these are small, so all is the request's.
			if got, bound := st.bodies.chunked-before, int64(len(b)-shared+chunkMin); got > bound {
				over++
			}
		}
		for i := range bodies {
			e, err := st.Exchange(context.Background(), fmt.Sprintf("lh_%06d", i))
			if err != nil || e.Bodies == nil || e.Bodies.Request != bodies[i] {
				t.Fatalf("exchange %d: the request body does not read back as written (%v)", i, err)
			}
		}
		return over, st.bodies.chunked
	}
	over, with := chunkedPerTurn(true)
	if over > 0 {
		t.Errorf("with message ends, %d turns chunked more than what they add plus %d bytes", over, chunkMin)
	}
	_, without := chunkedPerTurn(false)
	t.Logf("bytes chunked over %d turns: %d with message ends, %d without", len(bodies), with, without)
	if with*2 > without {
		t.Errorf("message ends saved little: %d bytes chunked with them, %d without; this session's text should give the rolling hash no cut", with, without)
	}
}
