package anthropic

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"longhaul/proxy/recall"
)

// conversation builds a request body around raw messages, large enough to be recalled.
func conversation(system string, msgs []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":%q,"messages":[`, system)
	b.WriteString(strings.Join(msgs, ","))
	b.WriteString(`],"metadata":{"user_id":"session-recall"},"stream":true}`)
	return b.Bytes()
}

// rounds returns n tool rounds of about 3 KB each; variety puts images, signed thinking and
// saved-to notices in them, so the held-back counts of MessageStats are exercised.
func rounds(n int, variety bool) []string {
	out := []string{`{"role":"user","content":[{"type":"text","text":"Fix the tests."}]}`}
	for i := range n {
		out = append(out, fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":"round %d","signature":"sig%d"},{"type":"tool_use","id":"t%d","name":"Read","input":{"path":"/f%d"}}]}`, i, i, i, i))
		result := fmt.Sprintf(`"%s"`, strings.Repeat(fmt.Sprintf("line %d of the file \\\"quoted\\\"\\n", i), 100))
		if variety && i%7 == 3 {
			result = `[{"type":"text","text":"Output saved to /tmp/out.txt"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]`
		}
		out = append(out, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":%s}]}`, i, result))
	}
	return out
}

func withMessage(msgs []string, i int, m string) []string {
	out := append([]string(nil), msgs...)
	out[i] = m
	return out
}

// peekWithRecall peeks body through rc, reading it through each reader shape, checks the
// results agree, and remembers the body under tag.
func peekWithRecall(t *testing.T, rc *Recall, tag string, body []byte) (Peek, Recollection, error) {
	t.Helper()
	var first Peek
	var firstFound Recollection
	var firstErr error
	var marks *Marks
	for i, r := range []func() io.Reader{
		func() io.Reader { return bytes.NewReader(body) },
		func() io.Reader { return iotest.HalfReader(bytes.NewReader(body)) },
		func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
	} {
		p, found, m, err := rc.ReadAndPeek(r(), make([]byte, len(body)), nil)
		if i == 0 {
			first, firstFound, firstErr, marks = p, found, err, m
			continue
		}
		if p != first || found != firstFound || fmt.Sprint(err) != fmt.Sprint(firstErr) {
			t.Fatalf("%s: reader %d peeked %+v, %+v, %v; the whole reader %+v, %+v, %v", tag, i, p, found, err, first, firstFound, firstErr)
		}
	}
	if firstErr == nil {
		rc.Remember(tag, nil, body, marks, firstFound, func() {})
	}
	return first, firstFound, firstErr
}

func TestRecallPeeksAsAFullScan(t *testing.T) {
	base := rounds(25, true)
	longer := append(rounds(27, true), `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`)
	type step struct {
		name string
		body []byte
		// shares is the step whose body this one repeats from its start through at least one
		// message ("" none), and shared the bytes repeated.
		shares string
		shared func(prev []byte) int
	}
	endOfMessage := func(system string, msgs []string, k int) func([]byte) int {
		return func([]byte) int {
			return len(conversation(system, msgs[:k+1])) - len(`],"metadata":{"user_id":"session-recall"},"stream":true}`)
		}
	}
	steps := []step{
		{name: "first", body: conversation("Be brief.", base)},
		{name: "next turn", body: conversation("Be brief.", longer), shares: "first", shared: endOfMessage("Be brief.", base, len(base)-1)},
		{name: "same again", body: conversation("Be brief.", longer), shares: "next turn", shared: endOfMessage("Be brief.", longer, len(longer)-1)},
		{name: "last message edited", body: conversation("Be brief.", withMessage(longer, len(longer)-1, `{"role":"assistant","content":"Done!"}`)), shares: "same again", shared: endOfMessage("Be brief.", longer, len(longer)-2)},
		{name: "a middle message edited", body: conversation("Be brief.", withMessage(longer, 9, `{"role":"user","content":"edited"}`)), shares: "last message edited", shared: endOfMessage("Be brief.", longer, 8)},
		{name: "first message edited", body: conversation("Be brief.", withMessage(longer, 0, `{"role":"user","content":"other task"}`))},
		{name: "another system prompt", body: conversation("Be thorough.", longer)},
		{name: "the old conversation goes on", body: conversation("Be thorough.", append(append([]string(nil), longer...), `{"role":"user","content":"more"}`)), shares: "another system prompt", shared: endOfMessage("Be thorough.", longer, len(longer)-1)},
	}
	rc := NewRecall()
	bodies := map[string][]byte{}
	for _, st := range steps {
		want, wantErr := PeekRequest(st.body)
		got, found, err := peekWithRecall(t, rc, st.name, st.body)
		if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("%s: recalled peek %+v, %v; a full scan gives %+v, %v", st.name, got, err, want, wantErr)
		}
		if st.shares == "" {
			if found.Shared != 0 {
				t.Errorf("%s: repeats %+v; want nothing", st.name, found)
			}
		} else {
			prev := bodies[st.shares]
			if found.Tag != st.shares || found.Shared != st.shared(prev) {
				t.Errorf("%s: repeats %+v; want %d bytes of %q", st.name, found, st.shared(prev), st.shares)
			}
			if !bytes.Equal(st.body[:found.Shared], prev[:found.Shared]) {
				t.Errorf("%s: the %d bytes said to repeat %q differ", st.name, found.Shared, st.shares)
			}
		}
		bodies[st.name] = st.body
	}
}

func TestRecallOfBrokenBodies(t *testing.T) {
	msgs := rounds(25, true)
	good := conversation("Be brief.", msgs)
	cut := good[:len(good)*2/3]
	twice := bytes.Replace(good, []byte(`,"metadata"`), []byte(`,"messages":[`+msgs[0]+`],"metadata"`), 1)
	broken := bytes.Replace(good, []byte(`"id":"t15"`), []byte(`"id":"t15",,`), 1)
	for _, body := range [][]byte{cut, twice, broken, good} {
		rc := NewRecall()
		peekWithRecall(t, rc, "good", good)
		want, wantErr := PeekRequest(body)
		got, _, err := peekWithRecall(t, rc, "body", body)
		if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("recalled peek %+v, %v; a full scan gives %+v, %v", got, err, want, wantErr)
		}
	}
	// A body whose messages key repeats is not remembered: its marks would mix two arrays.
	rc := NewRecall()
	peekWithRecall(t, rc, "twice", twice)
	if _, found, _ := peekWithRecall(t, rc, "good", good); found.Shared != 0 {
		t.Errorf("a body with two messages arrays was recalled: %+v", found)
	}
}

func TestRecallReleasesEachBodyOnce(t *testing.T) {
	rc := NewRecall()
	released := map[string]int{}
	remember := func(tag string, body []byte) {
		_, found, m, err := rc.ReadAndPeek(bytes.NewReader(body), make([]byte, len(body)), nil)
		if err != nil {
			t.Fatal(err)
		}
		rc.Remember(tag, nil, body, m, found, func() { released[tag]++ })
	}
	// Distinct conversations: each is an entry until the bound evicts the oldest.
	for i := range recall.MaxEntries + 3 {
		remember(fmt.Sprint("conversation ", i), conversation(fmt.Sprint("system ", i), rounds(25, false)))
	}
	for i := range recall.MaxEntries + 3 {
		tag, want := fmt.Sprint("conversation ", i), 0
		if i < 3 {
			want = 1
		}
		if released[tag] != want {
			t.Errorf("%s released %d times; want %d", tag, released[tag], want)
		}
	}
	// A next turn replaces the entry of the body it repeats.
	remember("next turn", conversation(fmt.Sprint("system ", recall.MaxEntries+2), rounds(26, false)))
	if released[fmt.Sprint("conversation ", recall.MaxEntries+2)] != 1 {
		t.Errorf("the body a next turn repeats was kept beside it")
	}
	// Small bodies are not kept.
	small := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	remember("small", small)
	if released["small"] != 1 {
		t.Errorf("a small body was kept")
	}
	rc.Forget()
	for tag, n := range released {
		if n != 1 {
			t.Errorf("%s released %d times after Forget; want once", tag, n)
		}
	}
	if len(released) != recall.MaxEntries+3+2 {
		t.Errorf("%d bodies released; want all %d", len(released), recall.MaxEntries+3+2)
	}
}

// FuzzRecall: whatever the two bodies, a peek that recalls the first gives the second's full
// scan, and what it says the second repeats, it repeats.
func FuzzRecall(f *testing.F) {
	base := conversation("Be brief.", rounds(25, true))
	f.Add(base, 0, []byte{})
	f.Add(base, len(base)-60, []byte(`,{"role":"user","content":"more"}`))
	f.Add(base, 5000, []byte(`x`))
	f.Add(base, 40000, []byte(`"},{"type":"image"}]}`))
	f.Fuzz(func(t *testing.T, first []byte, at int, insert []byte) {
		if len(first) < recall.MinBody {
			first = append(append([]byte(nil), base[:len(base)-1]...), first...)
		}
		at = min(max(at, 0), len(first))
		second := append(append(append([]byte(nil), first[:at]...), insert...), first[at:]...)
		rc := NewRecall()
		_, found0, m, err := rc.ReadAndPeek(bytes.NewReader(first), make([]byte, len(first)), nil)
		if err == nil {
			rc.Remember("first", nil, first, m, found0, func() {})
		}
		want, wantErr := PeekRequest(second)
		got, found, _, err := rc.ReadAndPeek(iotest.HalfReader(bytes.NewReader(second)), make([]byte, len(second)), nil)
		if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("recalled peek %+v, %v; a full scan gives %+v, %v", got, err, want, wantErr)
		}
		if found.Shared > 0 && (found.Tag != "first" || !bytes.Equal(second[:found.Shared], first[:found.Shared])) {
			t.Fatalf("said to repeat %d bytes of %q, which differ", found.Shared, found.Tag)
		}
	})
}

// A body too large to be remembered is not marked: its marks would only be thrown away.
func TestRecallMarksOnlyWhatItMayKeep(t *testing.T) {
	var msgs []string
	msg := `{"role":"user","content":"` + strings.Repeat("a", 200) + `"}`
	for n := 0; n*len(msg) < recall.MaxBody; n++ {
		msgs = append(msgs, msg)
	}
	rc := NewRecall()
	for _, body := range [][]byte{conversation("Be brief.", msgs), conversation("Be brief.", rounds(25, false))} {
		_, _, m, err := rc.ReadAndPeek(bytes.NewReader(body), make([]byte, len(body)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if kept := recall.Kept(len(body)); (m != nil) != kept {
			t.Errorf("a body of %d bytes has marks %v; want them only when it may be kept (%v)", len(body), m != nil, kept)
		}
	}
}
