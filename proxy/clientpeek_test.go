package proxy

// The peek of a client's own body while it arrives (peekOpenAI and peekGemini over
// anthropic.Arriving) against the peek over the whole slice it replaced (peekOpenAISlice and
// peekGeminiSlice below, the code clientpeek.go had before): the same fields and the same
// errors, byte for byte in their messages, over the fixtures of the repository, edge cases,
// every truncation of them and a fuzz target, whatever the reads the body arrives in. A body
// that ends short or fails (the client hung up) is a *ReadError, as it was when readBody read
// it whole first.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
)

// peekOpenAISlice is peekOpenAI as it was over a complete body: the reference.
func peekOpenAISlice(body []byte) (clientPeek, error) {
	var p clientPeek
	var explicit, first, second []byte
	err := walkTopSlice(body, func(k []byte, vi int) (int, error) {
		if string(k) == "messages" {
			return p.walkChatMessagesSlice(body, vi, &first, &second)
		}
		ve, err := anthropic.SkipValue(body, vi)
		if err != nil {
			return 0, err
		}
		v := body[vi:ve]
		switch string(k) {
		case "model":
			p.model = anthropic.Unquote(v)
		case "stream":
			p.stream = string(v) == "true"
		case "prompt_cache_key":
			explicit = v
		case "user", "safety_identifier":
			if explicit == nil {
				explicit = v
			}
		case "input":
			first = v
			p.engine = true
			if len(v) > 0 && v[0] == '[' {
				anthropic.EachElement(v, func([]byte) error { //nolint:errcheck // validated by the walk
					p.messages++
					return nil
				})
			}
		case "instructions":
			second = v
		case "reasoning_effort", "reasoning":
			p.engine = true
		case "tools":
			p.countTools(v)
		}
		return ve, nil
	})
	p.session = clientSession(explicit, first, second)
	return p, err
}

func (p *clientPeek) walkChatMessagesSlice(b []byte, i int, first, second *[]byte) (int, error) {
	n := 0
	return anthropic.WalkArray(b, i, func(mi int) (int, error) {
		var role, content []byte
		me, err := anthropic.WalkObject(b, mi, func(k []byte, vi int) (int, error) {
			ve, err := anthropic.SkipValue(b, vi)
			if err != nil {
				return 0, err
			}
			switch string(k) {
			case `"role"`:
				role = b[vi:ve]
			case `"content"`:
				content = b[vi:ve]
			case `"reasoning_content"`, `"thinking_blocks"`, `"reasoning"`:
				p.engine = true
			}
			return ve, nil
		})
		if err != nil {
			return 0, err
		}
		switch n {
		case 0:
			*first = b[mi:me]
		case 1:
			*second = b[mi:me]
		}
		n++
		p.messages = n
		if string(role) == `"tool"` {
			p.toolResult(content)
		}
		return me, nil
	})
}

// peekGeminiSlice is peekGemini as it was over a complete body: the reference.
func peekGeminiSlice(body []byte) (clientPeek, error) {
	var p clientPeek
	var system, first []byte
	err := walkTopSlice(body, func(k []byte, vi int) (int, error) {
		if string(k) == "contents" {
			return p.walkGeminiContentsSlice(body, vi, &first)
		}
		ve, err := anthropic.SkipValue(body, vi)
		if err != nil {
			return 0, err
		}
		switch string(k) {
		case "systemInstruction", "system_instruction":
			system = body[vi:ve]
		case "generationConfig", "generation_config":
			if bytes.Contains(body[vi:ve], []byte("hinking")) {
				p.engine = true
			}
		case "tools":
			anthropic.EachElement(body[vi:ve], func(tool []byte) error { //nolint:errcheck // validated by the walk
				p.countTools(anthropic.MemberValue(tool, "functionDeclarations"))
				p.countTools(anthropic.MemberValue(tool, "function_declarations"))
				return nil
			})
			p.toolBytes = ve - vi
		}
		return ve, nil
	})
	p.session = clientSession(nil, system, first)
	return p, err
}

func (p *clientPeek) walkGeminiContentsSlice(b []byte, i int, first *[]byte) (int, error) {
	n := 0
	return anthropic.WalkArray(b, i, func(ci int) (int, error) {
		ce, err := anthropic.SkipValue(b, ci)
		if err != nil {
			return 0, err
		}
		turn := b[ci:ce]
		if n == 0 {
			*first = turn
		}
		n++
		p.messages = n
		for _, m := range geminiEngineMarkers {
			if bytes.Contains(turn, m) {
				p.engine = true
			}
		}
		for _, m := range geminiResponseKeys {
			if bytes.Contains(turn, m) {
				p.toolResult(turn)
			}
		}
		return ce, nil
	})
}

func walkTopSlice(body []byte, fn func(key []byte, vi int) (int, error)) error {
	end, err := anthropic.WalkObject(body, 0, func(k []byte, vi int) (int, error) {
		return fn(k[1:len(k)-1], vi)
	})
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body[end:])) > 0 {
		return &anthropic.SyntaxError{Offset: end, Msg: "unexpected data after the top-level value"}
	}
	return nil
}

// clientPeeks pairs each protocol's peek with its reference.
var clientPeeks = []struct {
	name  string
	peek  func(*anthropic.Arriving) (clientPeek, error)
	slice func([]byte) (clientPeek, error)
}{
	{"chat and responses", func(a *anthropic.Arriving) (clientPeek, error) { return peekOpenAI(a, nil) }, peekOpenAISlice},
	{"gemini", peekGemini, peekGeminiSlice},
}

// arrivals are the ways a body reaches the peek: complete, or read in pieces of many sizes.
var arrivals = []struct {
	name string
	of   func(body []byte) *anthropic.Arriving
}{
	{"complete", anthropic.Arrived},
	{"one byte a read", func(b []byte) *anthropic.Arriving {
		return anthropic.NewArriving(iotest.OneByteReader(bytes.NewReader(b)), make([]byte, len(b)))
	}},
	{"halves of each read", func(b []byte) *anthropic.Arriving {
		return anthropic.NewArriving(iotest.HalfReader(bytes.NewReader(b)), make([]byte, len(b)))
	}},
	{"the end of input with the last bytes", func(b []byte) *anthropic.Arriving {
		return anthropic.NewArriving(iotest.DataErrReader(bytes.NewReader(b)), make([]byte, len(b)))
	}},
	{"7-byte reads", func(b []byte) *anthropic.Arriving {
		return anthropic.NewArriving(&chunkReader{body: b, size: 7}, make([]byte, len(b)))
	}},
	{"4093-byte reads", func(b []byte) *anthropic.Arriving {
		return anthropic.NewArriving(&chunkReader{body: b, size: 4093}, make([]byte, len(b)))
	}},
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// checkSamePeek checks that every peek of body, in every arrival, finds what its reference
// finds over the slice.
func checkSamePeek(t *testing.T, name string, body []byte) {
	t.Helper()
	for _, cp := range clientPeeks {
		want, wantErr := cp.slice(body)
		for _, a := range arrivals {
			got, err := cp.peek(a.of(body))
			if got != want || errText(err) != errText(wantErr) {
				t.Errorf("%s: %s peek, %s = %+v, %v; over the slice %+v, %v", name, cp.name, a.name, got, err, want, wantErr)
			}
		}
	}
}

// peekCorpus is every client request body among the repository's fixtures (Chat, Responses
// and Gemini, inputs and translated outputs), conversations of three sizes, and edge cases.
func peekCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	corpus := map[string][]byte{}
	for _, pattern := range []string{
		"openai/testdata/*/request_to_anthropic/*.input.json",
		"openai/testdata/*/request_from_anthropic/*.golden.json",
		"compact/testdata/shapes/*/*.input.json",
		"compact/testdata/shapes/*/*.golden.json",
		"gemini/testdata/request_*.json",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("glob %s: %v files, %v", pattern, len(files), err)
		}
		for _, f := range files {
			body, err := readFile(f)
			if err != nil {
				t.Fatal(err)
			}
			corpus[f] = body
		}
	}
	for _, size := range []int{1 << 10, 64 << 10, 800 << 10} {
		corpus[fmt.Sprintf("chatConversation(%d)", size)] = chatConversation(size)
	}
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	for i, c := range []string{
		``, ` `, `{}`, " {}\n", `{} x`, "{}\u00a0", "{}\u2028", `[]`, `""`, `null`, `{`, `{"`, `{"model`, `{"model"`, `{"model":`,
		`{"model":"gpt`, `{"model":"gpt"`, `{"model":"gpt",}`, `{"model" "gpt"}`, `{"model":"gpt"]`, `{model:"gpt"}`,
		`{"model":"g\u0070t-4.1","stream":true}`, `{"model":"\x"}`, `{"model":5,"stream":"true"}`, `{"model":"a","model":"b","stream":true,"stream":false}`,
		`{ "model" : "m" , "messages" : [ { "role" : "tool" , "content" : "x" } , { "role":"user" } ] }`,
		`{"messages":[{"role":"tool","content":"Output saved to /tmp/out.txt"}]}`,
		`{"messages":[{"role":"tool","content":{"a":[1,-2.5e+3,{"b":null,"c":true}]}},{"role":"assistant","reasoning_content":"hm"}]}`,
		`{"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}],"messages":[]}`,
		`{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"},{"role":"tool","content":"cc"}],"input":"i"}`,
		`{"messages":{}}`, `{"messages":[1]}`, `{"messages":[{"role":"tool"},]}`, `{"messages":[{"role":"tool"}`, `{"messages":[{"role":"tool","content":"x\"}]}`,
		`{"messages":[{"role":"tool","content":"a\\\"b\\\\"},{"thinking_blocks":[]}]}`,
		`{"input":"x","instructions":"y","prompt_cache_key":"k","user":"u"}`, `{"user":"u","safety_identifier":"s"}`, `{"prompt_cache_key":null,"user":"u"}`,
		`{"input":[{"role":"user","content":"x"}],"reasoning":{"effort":"high"}}`, `{"reasoning_effort":"low"}`,
		`{"tools":[{"type":"function"},{}],"tools":[{"x":1}]}`, `{"tools":{}}`, `{"tools":[1,2,3]}`, `{"tools":[1,2,}`,
		`{"n":01}`, `{"n":-}`, `{"n":1.}`, `{"n":1e}`, `{"n":-0.0E-0}`, `{"stream":tru}`, `{"stream":true `, `{"stream":nul}`,
		`{"x":` + deep + `}`, `{"messages":[{"content":` + deep + `}]}`, `{"contents":[` + deep + `]}`,
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"parts":[{"functionResponse":{"name":"f","response":{"r":"saved to x"}}}]},{"parts":[{"thought":true}]}],` +
			`"systemInstruction":{"parts":[{"text":"s"}]},"generationConfig":{"thinkingConfig":{}},"tools":[{"functionDeclarations":[{},{}]},{"function_declarations":[{}]}]}`,
		`{"system_instruction":"s","contents":[{"parts":[{"inline_data":{}}]}],"generation_config":{}}`, `{"contents":[1,`, `{"contents":{}}`,
		"{\"messages\":[{\"role\":\"tool\",\"content\":\"\xff\xfe h\u00e9llo\"}]}",
	} {
		corpus[fmt.Sprintf("edge %d %.40q", i, c)] = []byte(c)
	}
	return corpus
}

func readFile(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read fixture %s: %w", name, err)
	}
	return b, nil
}

func TestPeekWhileArrivingFindsWhatTheSlicePeekFinds(t *testing.T) {
	for name, body := range peekCorpus(t) {
		checkSamePeek(t, name, body)
		// Every prefix is malformed JSON unless whitespace alone is left off: the errors
		// must be the same, at the same offsets. Small bodies are cut everywhere, the
		// largest (read a byte at a time too) in a few places.
		cuts := 97
		if len(body) > 64<<10 {
			cuts = 5
		}
		step := max(1, len(body)/cuts)
		for cut := 0; cut < len(body); cut += step {
			checkSamePeek(t, fmt.Sprintf("%s cut at %d", name, cut), body[:cut])
		}
	}
}

var errHungUp = errors.New("connection reset by peer")

func TestPeekOfABodyCutShortIsAReadError(t *testing.T) {
	readers := []struct {
		name string
		of   func(sent []byte) io.Reader
		want error
	}{
		{"the body ends early", func(sent []byte) io.Reader { return bytes.NewReader(sent) }, io.ErrUnexpectedEOF},
		{"the body ends early, a byte a read", func(sent []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(sent)) }, io.ErrUnexpectedEOF},
		{"the read fails", func(sent []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(sent), iotest.ErrReader(errHungUp))
		}, errHungUp},
		{"the read fails, a byte a read", func(sent []byte) io.Reader {
			return iotest.OneByteReader(io.MultiReader(bytes.NewReader(sent), iotest.ErrReader(errHungUp)))
		}, errHungUp},
	}
	for name, body := range peekCorpus(t) {
		for _, cp := range clientPeeks {
			if _, err := cp.slice(body); err != nil || len(body) > 64<<10 {
				continue // a malformed body may be refused before it ends; the big one is slow a byte a read
			}
			for _, cut := range []int{0, 1, len(body) / 2, len(body) - 1} {
				for _, r := range readers {
					_, err := cp.peek(anthropic.NewArriving(r.of(body[:cut]), make([]byte, len(body))))
					var re *anthropic.ReadError
					if !errors.As(err, &re) || !errors.Is(err, r.want) {
						t.Errorf("%s peek of %s cut at %d, %s: %v; want a *ReadError of %v", cp.name, name, cut, r.name, err, r.want)
					}
				}
			}
		}
	}
}

func FuzzPeekWhileArriving(f *testing.F) {
	for _, body := range []string{
		`{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"tool","content":"saved to x"}],"tools":[{}]}`,
		`{"input":"x","instructions":"y","prompt_cache_key":"k"}`,
		`{"contents":[{"parts":[{"functionResponse":{}}]}],"systemInstruction":{},"tools":[{"functionDeclarations":[{}]}]}`,
		`{"messages":[{"content":"a\\\"b"}]} `, `{"n":-1.5e3}`, `{"a":[[[]]]}x`,
	} {
		f.Add([]byte(body), uint16(3))
	}
	f.Fuzz(func(t *testing.T, body []byte, size uint16) {
		for _, cp := range clientPeeks {
			want, wantErr := cp.slice(body)
			for _, a := range []*anthropic.Arriving{
				anthropic.Arrived(body),
				anthropic.NewArriving(&chunkReader{body: body, size: 1 + int(size)%64}, make([]byte, len(body))),
			} {
				got, err := cp.peek(a)
				if got != want || errText(err) != errText(wantErr) {
					t.Fatalf("%s peek of %q in reads of %d = %+v, %v; over the slice %+v, %v", cp.name, body, 1+size%64, got, err, want, wantErr)
				}
			}
		}
	})
}

// TestChatBodyReadWhilePeeked sends Chat bodies to an OpenAI account through the proxy in the
// ways a client may: what is forwarded is the client's bytes, a malformed body is refused in
// OpenAI's shape, and a client that hangs up mid-body is recorded as gone, its request never
// forwarded.
func TestChatBodyReadWhilePeeked(t *testing.T) {
	good := chatConversation(256 << 10)
	t.Run("written in 1 KB pieces with its length", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindOpenAI)
		req, err := http.NewRequest(http.MethodPost, s.front.URL+"/v1/chat/completions", &chunkReader{body: good, size: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(good))
		resp, err := s.front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if up := s.chat.Requests(); resp.StatusCode != 200 || len(up) != 1 || !bytes.Equal(up[0].Body, good) {
			t.Errorf("status %d %.200s, %d forwarded; want 200 and the client's bytes forwarded as they came", resp.StatusCode, body, len(up))
		}
	})
	t.Run("uploaded chunked, its length unknown", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindOpenAI)
		req, err := http.NewRequest(http.MethodPost, s.front.URL+"/v1/chat/completions", io.MultiReader(bytes.NewReader(good)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.front.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp.Body)
		resp.Body.Close()
		if up := s.chat.Requests(); resp.StatusCode != 200 || len(up) != 1 || !bytes.Equal(up[0].Body, good) {
			t.Errorf("status %d %.200s, %d forwarded; want 200 and the client's bytes forwarded as they came", resp.StatusCode, body, len(up))
		}
	})
	t.Run("malformed", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindOpenAI)
		bad := append(bytes.Clone(good[:len(good)-2]), ",}"...)
		resp, body := s.post(t, "/v1/chat/completions", string(bad), "Content-Type", "application/json")
		if resp.StatusCode != 400 || !strings.Contains(body, `"error":{"message":"malformed JSON request body: `) || len(s.chat.Requests()) != 0 {
			t.Errorf("status %d %s, %d forwarded; want 400 in OpenAI's shape, nothing forwarded", resp.StatusCode, body, len(s.chat.Requests()))
		}
	})
	t.Run("the client hangs up mid-body", func(t *testing.T) {
		s := newSeam(t, Config{}, pool.KindOpenAI)
		conn, err := net.Dial("tcp", s.front.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(good))
		conn.Write(good[:len(good)/2]) //nolint:errcheck // the proxy reads what arrives
		conn.Close()
		ex := s.obs.last(t)
		if ex.Status != statusClientClosed || len(s.chat.Requests()) != 0 {
			t.Errorf("exchange status %d, %d forwarded; want %d and nothing forwarded", ex.Status, len(s.chat.Requests()), statusClientClosed)
		}
	})
}
