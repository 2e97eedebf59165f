package proxy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/recall"
)

// chatMessages returns a Chat conversation's messages: a system prompt, a task, then n tool
// rounds of ~4 KB; variety puts reasoning and saved-to notices in some and one large result.
func chatMessages(n int, variety bool) []string {
	out := []string{`{"role":"system","content":"Be brief."}`, `{"role":"user","content":"Fix the tests."}`}
	for i := range n {
		call := fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"read","arguments":"{\"path\":\"/f%d\"}"}}]}`, i, i)
		if variety && i == 4 {
			call = strings.Replace(call, `"content":null`, `"content":null,"reasoning_content":"think"`, 1)
		}
		result := fmt.Sprintf("%q", strings.Repeat(fmt.Sprintf("line of file %d\n", i), 250))
		if variety && i == 7 {
			result = `"Output saved to /tmp/out.txt"`
		}
		if variety && i == 9 {
			result = fmt.Sprintf("%q", strings.Repeat("x", 40_000))
		}
		out = append(out, call, fmt.Sprintf(`{"role":"tool","tool_call_id":"call_%d","content":%s}`, i, result))
	}
	return out
}

func chatBody(msgs []string, tail string) []byte {
	return []byte(`{"model":"gpt-4.1","stream":true,"messages":[` + strings.Join(msgs, ",") + `]` + tail + `}`)
}

// peekChatRecalled peeks body through rc (read by r) and remembers it as exchange tag; it
// returns the peek, its error, and the exchange whose body the recall used ("": none) with how many bytes
// of it the body repeats.
func peekChatRecalled(rc *chatRecall, body []byte, r func(io.Reader) io.Reader, tag string) (clientPeek, error, string, int) {
	buf := staticBody(make([]byte, len(body)))
	rs := rc.scan(len(body))
	p, err := peekOpenAI(anthropic.NewArriving(r(bytes.NewReader(body)), buf.buf), rs)
	var used string
	var shared int
	if rs != nil {
		used = rs.used
		if usedTag, n, ok := rs.repeats(); ok != (used != "") || ok && usedTag != used {
			panic(fmt.Sprintf("repeats() = %q, %d, %v; the scan used %v", usedTag, n, ok, used))
		} else {
			shared = n
		}
	}
	if err == nil {
		rc.remember(buf, rs, tag)
	}
	return p, err, used, shared
}

func TestChatRecallPeeksAsAFullWalk(t *testing.T) {
	base := chatMessages(20, true)
	longer := append(chatMessages(22, true), `{"role":"assistant","content":"Done."}`)
	with := func(msgs []string, i int, m string) []string {
		out := append([]string(nil), msgs...)
		out[i] = m
		return out
	}
	steps := []struct {
		name    string
		body    []byte
		recalls bool
	}{
		{"first", chatBody(base, `,"user":"u1"`), false},
		{"next turn", chatBody(longer, `,"user":"u1"`), true},
		{"same again", chatBody(longer, `,"user":"u1"`), true},
		{"last message edited", chatBody(with(longer, len(longer)-1, `{"role":"assistant","content":"Done!"}`), `,"user":"u1"`), true},
		{"a middle message edited", chatBody(with(longer, 9, `{"role":"user","content":"edited"}`), ``), true},
		{"the first message edited", chatBody(with(longer, 0, `{"role":"system","content":"Be thorough."}`), ``), false},
		{"after a reasoning effort", chatBody(longer, `,"reasoning_effort":"high"`), true},
		{"messages twice", []byte(strings.Replace(string(chatBody(longer, ``)), `"stream":true,`, `"stream":true,"messages":[],`, 1)), false},
		{"cut short", chatBody(longer, ``)[:90_000], true},
		{"broken inside a repeated message", []byte(strings.Replace(string(chatBody(longer, ``)), `"call_3"`, `"call_3",,`, 1)), true},
	}
	for _, reader := range []struct {
		name string
		r    func(io.Reader) io.Reader
	}{{"whole", func(r io.Reader) io.Reader { return r }}, {"halves", iotest.HalfReader}, {"bytes", iotest.OneByteReader}} {
		rc := &chatRecall{}
		sent := map[string][]byte{}
		for _, st := range steps {
			want, wantErr := peekOpenAI(anthropic.Arrived(st.body), nil)
			got, err, used, shared := peekChatRecalled(rc, st.body, reader.r, st.name)
			sent[st.name] = st.body
			if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("%s, read %s: recalled peek %+v, %v; the full walk gives %+v, %v", st.name, reader.name, got, err, want, wantErr)
			}
			if (used != "") != st.recalls {
				t.Errorf("%s, read %s: recalled %v; want %v", st.name, reader.name, used != "", st.recalls)
			}
			// What the history is told: the body names a remembered exchange whose first bytes,
			// through the end of a message, it repeats exactly.
			if used != "" {
				prev := sent[used]
				if shared <= 0 || shared > len(st.body) || shared > len(prev) || !bytes.Equal(st.body[:shared], prev[:shared]) || st.body[shared-1] != '}' {
					t.Errorf("%s, read %s: repeats %d bytes of %q, which are not an equal run of whole messages", st.name, reader.name, shared, used)
				}
			}
		}
	}
}

// TestChatRecallReleasesEachBodyOnce: every body the recall keeps goes back to its pool once,
// when it is evicted, replaced by the turn that repeats it, or never kept.
func TestChatRecallReleasesEachBodyOnce(t *testing.T) {
	var pool bodyPool
	rc := &chatRecall{}
	var bodies []*requestBody
	for i := range recall.MaxEntries + 3 {
		body := chatBody(chatMessages(20, false), fmt.Sprintf(`,"user":"u%d"`, i))
		body = bytes.Replace(body, []byte("Be brief."), []byte(fmt.Sprintf("System %d.", i)), 1) // another conversation
		b := pool.get(len(body))
		copy(b.buf, body)
		rs := rc.scan(len(body))
		if _, err := peekOpenAI(anthropic.Arrived(b.buf), rs); err != nil {
			t.Fatal(err)
		}
		rc.remember(b, rs, fmt.Sprint(i))
		b.release() // the handler lets go; the recall holds its own reference
		bodies = append(bodies, b)
	}
	for i, b := range bodies {
		held := b.refs.Load()
		want := int32(1) // kept by the recall
		if i < 3 {
			want = 0 // evicted past recall.MaxEntries
		}
		if held != want {
			t.Errorf("body %d holds %d references; want %d", i, held, want)
		}
	}
	rc.mem.Forget()
	for i, b := range bodies {
		if n := b.refs.Load(); n != 0 {
			t.Errorf("body %d holds %d references after all were let go", i, n)
		}
	}
}

// FuzzChatRecall: whatever a body inserts into a remembered one, the recalled peek is the
// full walk's.
func FuzzChatRecall(f *testing.F) {
	base := chatBody(chatMessages(20, true), `,"user":"u1"`)
	f.Add(0, []byte{})
	f.Add(len(base)-20, []byte(`,{"role":"user","content":"more"}`))
	f.Add(5000, []byte(`x`))
	f.Add(40_000, []byte(`","reasoning_content":"r`))
	f.Fuzz(func(t *testing.T, at int, insert []byte) {
		at = min(max(at, 0), len(base))
		second := append(append(append([]byte(nil), base[:at]...), insert...), base[at:]...)
		rc := &chatRecall{}
		peekChatRecalled(rc, base, func(r io.Reader) io.Reader { return r }, "base")
		want, wantErr := peekOpenAI(anthropic.Arrived(second), nil)
		got, err, used, shared := peekChatRecalled(rc, second, iotest.HalfReader, "second")
		if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("recalled peek %+v, %v; the full walk gives %+v, %v", got, err, want, wantErr)
		}
		if used != "" && (shared <= 0 || shared > len(second) || shared > len(base) || !bytes.Equal(second[:shared], base[:shared])) {
			t.Fatalf("repeats %d bytes of the base, which differ", shared)
		}
	})
}
