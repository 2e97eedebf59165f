package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

func mustParse(t testing.TB, body []byte) *anthropic.Request {
	t.Helper()
	r, err := anthropic.ParseRequest(body)
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	return r
}

func TestEditKeepsOrderAndUnknownFields(t *testing.T) {
	body := []byte(`{"model":"claude-x","zeta":{"a": 1},"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","id":"keep-me","content":[{"type":"thinking","thinking":"a long enough thought","signature":"S1","future":[1,2]},{"type":"redacted_thinking","data":"xx"},{"type":"text","text":"ok","citations":[{"k":"v"}]}]},` +
		`{"role":"system","content":"mid-conversation system"},` +
		`{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},{"role":"assistant","content":"d"}],` +
		`"alpha":true,"metadata":{"user_id":"u"}}`)
	r := mustParse(t, body)
	if n := ElideThinking(r, 4); n != 1 {
		t.Fatalf("ElideThinking = %d; want 1", n)
	}
	out := string(r.Encode())
	for _, keep := range []string{
		`{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}`,
		`{"type":"redacted_thinking","data":"xx"}`,
		`{"type":"text","text":"ok","citations":[{"k":"v"}]}`,
		`{"role":"system","content":"mid-conversation system"}`,
		`"zeta":{"a": 1}`,
		`{"type":"thinking","thinking":"...","signature":"S1","future":[1,2]}`,
		`"id":"keep-me"`,
	} {
		if !strings.Contains(out, keep) {
			t.Errorf("output lost %s:\n%s", keep, out)
		}
	}
	order := []string{`"model"`, `"zeta"`, `"messages"`, `"alpha"`, `"metadata"`}
	last := -1
	for _, k := range order {
		i := strings.Index(out, k)
		if i <= last {
			t.Errorf("top-level key %s out of order in %s", k, out)
		}
		last = i
	}
}

func TestEstimatorCharacterClasses(t *testing.T) {
	e := Estimator{}
	tests := []struct {
		name string
		text string
		want float64
	}{
		{"ascii four chars per token", strings.Repeat("abcd", 100), 100},
		{"cjk 1.5 chars per token", strings.Repeat("世界", 75), 100},
		{"latin accents count as latin", strings.Repeat("é", 400), 100},
		{"emoji a token each", strings.Repeat("😀", 10), 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textTokens([]byte(tt.text)); got < tt.want-0.01 || got > tt.want+0.01 {
				t.Errorf("textTokens(%q…) = %v; want %v", tt.text[:8], got, tt.want)
			}
		})
	}
	img := mustParse(t, []byte(`{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"`+strings.Repeat("A", 100000)+`"}}]}]}`))
	if got := e.Raw(img); got != messageOverhead+blockOverhead+DefaultImageTokens {
		t.Errorf("Raw(image request) = %v; want the fixed image cost", got)
	}
	if got, want := e.WithMargin(100), 115; got != want {
		t.Errorf("WithMargin(100) = %d; want %d", got, want)
	}
}

func TestEstimatorCountsEveryPart(t *testing.T) {
	e := Estimator{}
	base := mustParse(t, []byte(`{"messages":[{"role":"user","content":"x"}]}`))
	for _, part := range []string{
		`"system":"` + strings.Repeat("s", 400) + `"`,
		`"tools":[{"name":"t","description":"` + strings.Repeat("d", 400) + `"}]`,
	} {
		r := mustParse(t, []byte(`{`+part+`,"messages":[{"role":"user","content":"x"}]}`))
		if e.Raw(r)-e.Raw(base) < 100 {
			t.Errorf("Raw did not count %.20s…", part)
		}
	}
	for _, blk := range []string{
		`{"type":"tool_use","id":"t","name":"n","input":{"q":"` + strings.Repeat("i", 400) + `"}}`,
		`{"type":"tool_result","tool_use_id":"t","content":"` + strings.Repeat("r", 400) + `"}`,
		`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"` + strings.Repeat("r", 400) + `"}]}`,
		`{"type":"thinking","thinking":"` + strings.Repeat("k", 400) + `","signature":"s"}`,
	} {
		r := mustParse(t, []byte(`{"messages":[{"role":"user","content":[`+blk+`]}]}`))
		if e.Raw(r)-e.Raw(base) < 100 {
			t.Errorf("Raw did not count block %.40s…", blk)
		}
	}
}

func TestLimits(t *testing.T) {
	l := NewLimits(map[string]int{"claude-*": 200000, "claude-3-haiku-*": 100000, "claude-3-haiku-20240307": 90000, "gemini-*": GeminiContextTokens, "*local*": 32000}, 128000)
	tests := []struct {
		model string
		betas []string
		want  int
	}{
		{"claude-sonnet-4-5-20250929", nil, 200000},
		{"claude-3-haiku-20240101", nil, 100000},
		{"claude-3-haiku-20240307", nil, 90000},
		{"Claude-Opus-4", nil, 200000},
		{"gemini-2.5-pro", nil, GeminiContextTokens},
		{"my-local-model", nil, 32000},
		{"mystery", nil, 128000},
		{"claude-sonnet-4-5", []string{"interleaved-thinking-2025-05-14", "context-1m-2025-08-07"}, OneMillionTokens},
		{"gemini-2.5-pro", []string{"context-1m-2025-08-07"}, GeminiContextTokens},
	}
	for _, tt := range tests {
		if got := l.For(tt.model, tt.betas); got != tt.want {
			t.Errorf("For(%q, %v) = %d; want %d", tt.model, tt.betas, got, tt.want)
		}
	}
	if got := ParseBetas([]string{"a, b", "context-1m-2025-08-07"}); len(got) != 3 || got[2] != "context-1m-2025-08-07" {
		t.Errorf("ParseBetas = %q", got)
	}
}

func TestCalibrationFactor(t *testing.T) {
	c := NewCalibrator(CalibratorOptions{Alpha: 0.5})
	if f := c.Observe("claude", 1000, 1200); f != 1.2 {
		t.Errorf("first Observe = %v; want 1.2 (taken as is)", f)
	}
	if f := c.Observe("claude", 1000, 1000); f < 1.099 || f > 1.101 {
		t.Errorf("second Observe = %v; want the EMA 1.1", f)
	}
	if f := c.Observe("gemini", 1000, 10000); f != MaxCalibration {
		t.Errorf("Observe of an outlier = %v; want clamped to %v", f, MaxCalibration)
	}
	snap := c.Snapshot()
	d := NewCalibrator(CalibratorOptions{})
	d.Restore(snap)
	if d.Factor("claude") != c.Factor("claude") || d.Factor("gpt") != 1 {
		t.Errorf("Restore did not bring back the factors: %v", d.Snapshot())
	}
}

func TestCalibrationAnchor(t *testing.T) {
	c := NewCalibrator(CalibratorOptions{})
	body := proxytest.ClaudeCodeRequest(100<<10, false)
	r := mustParse(t, body)
	c.SetAnchor("s1", r, 50000)
	if got := c.Count("s1", "claude", r); !got.Anchored || got.Calibrated != 50000 {
		t.Errorf("Count of the anchored request = %+v; want exactly the real 50000", got)
	}
	// The client resends the same history plus a new turn.
	grown := bytes.TrimSuffix(body, []byte("]}"))
	grown = append(grown, []byte(`,{"role":"assistant","content":"`+strings.Repeat("word ", 400)+`"},{"role":"user","content":"next"}]}`)...)
	g := c.Count("s1", "claude", mustParse(t, grown))
	if !g.Anchored || g.Calibrated <= 50000 || g.Calibrated > 50000+1000 {
		t.Errorf("Count of the grown request = %+v; want 50000 plus a ~600-token tail", g)
	}
	if other := c.Count("s2", "claude", r); other.Anchored {
		t.Errorf("another session used the anchor")
	}
}

func TestCompressorCapIsRuneSafe(t *testing.T) {
	// CJK and emoji straddle the cut point.
	text := strings.Repeat("a", DefaultMaxToolResultChars-DefaultMaxToolResultChars/2) + strings.Repeat("世😀", DefaultMaxToolResultChars)
	body := []byte(`{"messages":[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":` + string(anthropic.Quote(text)) + `}]}]}`)
	c := NewCompressor(CompressorOptions{})
	r := mustParse(t, body)
	if st := c.Apply(r); st.Truncated != 1 {
		t.Fatalf("Apply = %+v; want one truncation", st)
	}
	out := r.Encode()
	got := anthropic.Unquote(mustParse(t, out).Messages[2].Blocks[0].Content())
	if !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
		t.Errorf("truncated text is not clean UTF-8")
	}
	if n := utf8.RuneCountInString(got); n > DefaultMaxToolResultChars {
		t.Errorf("truncated text has %d chars; want <= %d", n, DefaultMaxToolResultChars)
	}
	if !strings.Contains(got, "...[truncated ") {
		t.Errorf("no truncation note")
	}
	r2 := mustParse(t, out)
	if st := c.Apply(r2); st.Items() != 0 || r2.Changed() {
		t.Errorf("second Apply changed the request again (%+v)", st)
	}
}

func TestCompressorNoOpKeepsBytes(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	r := mustParse(t, body)
	if st := NewCompressor(CompressorOptions{}).Apply(r); st.Items() != 0 || r.Changed() {
		t.Errorf("Apply on a plain session = %+v, changed %v; want nothing", st, r.Changed())
	}
}

// session builds a request of n tool rounds after a first user message.
func session(n int, tail string) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":1000,"messages":[{"role":"user","content":"start"}`)
	for i := range n {
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":"thinking about round %d in detail","signature":"sig%d"},{"type":"tool_use","id":"tu%d","name":"Read","input":{"n":%d}}]}`, i, i, i, i)
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu%d","content":"%s"}]}`, i, strings.Repeat("x", 400))
	}
	b.WriteString(tail)
	b.WriteString(`]}`)
	return []byte(b.String())
}

func TestLayer1BoundaryIsCacheStable(t *testing.T) {
	l := NewLayer1(5, 0)
	over := func(limit int) func(*anthropic.Request) bool {
		return func(r *anthropic.Request) bool { return len(r.Messages) > limit }
	}
	var firstKept []string
	moves := 0
	prev := ""
	for n := 8; n <= 40; n++ {
		r := mustParse(t, session(n, ""))
		removed := l.Apply(r, "sess", over(25))
		if removed == 0 {
			t.Fatalf("n=%d: nothing removed", n)
		}
		checkValid(t, session(n, ""), r.Encode())
		fk := r.Messages[1].Blocks[1].ID()
		firstKept = append(firstKept, fk)
		if fk != prev {
			moves++
			prev = fk
		}
	}
	// 33 requests; the boundary may move only when the trimmed request grew
	// past the limit, i.e. about every (25-11)/2 rounds, not every request.
	if moves > 6 {
		t.Errorf("boundary moved %d times over 33 requests (%v); want it to stay put between steps", moves, firstKept)
	}
	// Without a session the cut is always to the last 5 rounds.
	r := mustParse(t, session(20, ""))
	if got := l.Apply(r, "", nil); got != 15 || len(findRounds(r.Messages)) != 5 {
		t.Errorf("Apply without session removed %d rounds; want 15, leaving 5", got)
	}
}

func TestLayer1KeepsUserTextAndFirstUser(t *testing.T) {
	body := session(8, `,{"role":"assistant","content":"done"},{"role":"user","content":"thanks"}`)
	// Put user text into the first round's result message.
	body = bytes.Replace(body, []byte(`"tool_use_id":"tu0","content":"`+strings.Repeat("x", 400)+`"}`),
		[]byte(`"tool_use_id":"tu0","content":"r"},{"type":"text","text":"keep this note"}`), 1)
	r := mustParse(t, body)
	NewLayer1(2, 0).Apply(r, "", nil)
	out := r.Encode()
	if !bytes.Contains(out, []byte(`{"type":"text","text":"keep this note"}`)) {
		t.Errorf("user text sharing a message with a removed tool_result was lost")
	}
	checkValid(t, body, out)
}

func TestLayer2ProtectsTail(t *testing.T) {
	r := mustParse(t, session(3, ""))
	if n := ElideThinking(r, 4); n != 1 {
		t.Errorf("ElideThinking = %d; want 1 (rounds 1 and 2 are in the last 4 messages)", n)
	}
}

type countingSummarizer struct {
	calls atomic.Int32
	err   error
}

func (c *countingSummarizer) Summarize(ctx context.Context, h History) (string, error) {
	c.calls.Add(1)
	if c.err != nil {
		return "", c.err
	}
	return fmt.Sprintf("<conversation_summary><current_work>%d messages</current_work></conversation_summary>", len(h.Messages)), nil
}

func TestLayer3CachesPerPrefix(t *testing.T) {
	s := &countingSummarizer{}
	l := NewLayer3(s, 0)
	limit := 30
	over := func(r *anthropic.Request) bool { return len(r.Messages) > limit }
	for n := 10; n <= 30; n++ {
		body := session(n, "")
		r := mustParse(t, body)
		res, err := l.Apply(context.Background(), r, "sess", over)
		if err != nil {
			t.Fatal(err)
		}
		if res.Summarized == 0 {
			t.Fatalf("n=%d: nothing summarised", n)
		}
		out := r.Encode()
		checkValid(t, body, out)
		if !bytes.Contains(out, []byte("<latest_thinking_signature>sig")) {
			t.Errorf("n=%d: summary lacks the latest signature", n)
		}
	}
	if got := s.calls.Load(); got > 3 {
		t.Errorf("summariser called %d times for 21 requests; want a few (cache per prefix)", got)
	}
}

func TestLayer3LeavesSummaryRequestsAlone(t *testing.T) {
	s := &countingSummarizer{}
	body := session(6, `,{"role":"user","content":"Your task is to create a detailed summary of the conversation so far."}`)
	r := mustParse(t, body)
	if res, err := NewLayer3(s, 0).Apply(context.Background(), r, "s", nil); err != nil || res.Summarized != 0 || r.Changed() {
		t.Errorf("Apply on a /compact request = %+v, %v; want untouched", res, err)
	}
}

func TestPipelineNothingToDo(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	p := NewPipeline(Options{Limits: NewLimits(nil, 10_000_000)})
	res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || &res.Body[0] != &body[0] || len(res.Stats) != 0 {
		t.Errorf("Run below every threshold = changed %v, %d stats; want the same slice", res.Changed, len(res.Stats))
	}
}

func TestPipelineRunsLayersInOrder(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	s := &countingSummarizer{}
	p := NewPipeline(Options{Limits: NewLimits(nil, 20_000), Summarizer: s})
	res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	var layers []Layer
	for _, st := range res.Stats {
		layers = append(layers, st.Layer)
		if st.TokensAfter >= st.TokensBefore {
			t.Errorf("%s: tokens %d -> %d; want fewer", st.Layer, st.TokensBefore, st.TokensAfter)
		}
	}
	if fmt.Sprint(layers) != "[Layer-1 Layer-2 Layer-3]" {
		t.Errorf("layers = %v; want [Layer-1 Layer-2 Layer-3]", layers)
	}
	if res.Ratio() > 0.7 {
		t.Errorf("ratio after = %.2f; want <= 0.7", res.Ratio())
	}
	checkValid(t, body, res.Body)
	if !json.Valid(res.Body) {
		t.Errorf("invalid JSON")
	}
	// The same request again: the summary comes from the cache.
	res2, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if last := res2.Stats[len(res2.Stats)-1]; !last.CacheHit || s.calls.Load() != 1 {
		t.Errorf("second run: %+v, %d calls; want a cache hit", last, s.calls.Load())
	}
	if !bytes.Equal(res.Body, res2.Body) {
		t.Errorf("same input gave different output (not deterministic)")
	}
}

func TestPipelineSummaryFailure(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	p := NewPipeline(Options{Limits: NewLimits(nil, 20_000), Summarizer: &countingSummarizer{err: errors.New("boom")}})
	_, err := p.Run(context.Background(), Input{Body: body})
	if !IsSummaryFailure(err) {
		t.Errorf("Run error = %v; want ErrSummaryFailed", err)
	}
}

func TestPipelinePurifies(t *testing.T) {
	body := session(3, "")
	res, err := NewPipeline(Options{}).Run(context.Background(), Input{Body: body, NoThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(res.Body, []byte(`"thinking"`)) || len(res.Stats) != 1 || res.Stats[0].Layer != LayerPurify {
		t.Errorf("Run with NoThinking = %s, %+v", res.Body, res.Stats)
	}
}

// A request that still does not fit after every layer — here a single huge
// user message, with nothing before it to summarise — is refused like a
// failed summary, never forwarded to fail upstream.
func TestPipelineRefusesWhatStillDoesNotFit(t *testing.T) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"` + strings.Repeat("word ", 4000) + `"}]}`)
	p := NewPipeline(Options{Limits: NewLimits(nil, 2000), Summarizer: fixedSummary{}})
	_, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if !IsSummaryFailure(err) || !strings.Contains(err.Error(), "2000-token window") {
		t.Fatalf("Run = %v; want a summary failure naming the window", err)
	}
	// Over the Layer-3 threshold but within the window: forwarded.
	p = NewPipeline(Options{Limits: NewLimits(nil, 6000), Summarizer: fixedSummary{}})
	if res, err := p.Run(context.Background(), Input{Body: body, Session: "s"}); err != nil || res.Changed {
		t.Fatalf("Run within the window = changed %v, %v; want it forwarded as is", res.Changed, err)
	}
}
