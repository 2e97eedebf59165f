package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
)

// Fuzz targets for Layer 3 and for raw bytes; fuzz_test.go says what every
// output must meet, fuzz_gen_test.go how inputs are generated.

// shortSummarizer is Layer 3's fake summary model: deterministic, and its
// summary is never longer than the history it replaces (a fraction of it,
// chosen by the fuzz input).
type shortSummarizer struct{ percent int }

func (s shortSummarizer) Summarize(_ context.Context, h History) (string, error) {
	size := 0
	for i := range h.Messages {
		size += len(h.Messages[i].Raw())
	}
	n := size * s.percent / 100
	var b strings.Builder
	b.WriteString("<conversation_summary><current_work>")
	for i := range h.Messages {
		if b.Len() >= n {
			break
		}
		b.WriteString(h.Messages[i].Role)
		b.WriteString(": ")
		b.WriteString(h.Messages[i].Text())
		b.WriteString("\n")
	}
	b.WriteString("</current_work></conversation_summary>")
	return prefixRunes(b.String(), max(n, 1)), nil
}

func FuzzLayer3(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		sum := shortSummarizer{percent: 100}
		if len(data) > 0 {
			sum.percent = 1 + int(data[0])%100
		}
		apply := func(l *Layer3, session string) stepFn {
			return func(r *anthropic.Request) {
				if _, err := l.Apply(context.Background(), r, session, nil); err != nil {
					t.Fatalf("Layer3.Apply: %v", err)
				}
			}
		}
		out, valid := checkStep(t, func() stepFn { return apply(NewLayer3(sum, 0), "") }, body)
		if out == nil || !valid {
			return
		}
		in, got := mustParseT(t, body), mustParseT(t, out)
		if !bytes.Equal(out, body) {
			if !strings.HasPrefix(got.Messages[0].Text(), ContinuationPreamble) {
				t.Errorf("a fork does not open with the summary")
			}
			// The client's last user message (with its tool round) stays verbatim.
			lastUser := func(ms []anthropic.Message) []byte {
				for i := len(ms) - 1; i >= 0; i-- {
					if ms[i].Role == "user" {
						return ms[i].Raw()
					}
				}
				return nil
			}
			if !bytes.Equal(lastUser(in.Messages), lastUser(got.Messages)) {
				t.Errorf("the last user message was not kept verbatim")
			}
			// So is everything from the start of its tool round on.
			tail := in.Messages[tailStart(in.Messages):]
			if len(got.Messages) < len(tail) {
				t.Fatalf("the fork is shorter than the tail it keeps")
			}
			for i, m := range got.Messages[len(got.Messages)-len(tail):] {
				if !bytes.Equal(m.Raw(), tail[i].Raw()) {
					t.Errorf("tail message %d changed", i)
				}
			}
			if sig := LatestSignature(in.Messages[:tailStart(in.Messages)]); sig != "" &&
				!strings.Contains(got.Messages[0].Text(), "<latest_thinking_signature>"+sig+"</latest_thinking_signature>") {
				t.Errorf("the summary does not carry the latest signature %s", sig)
			}
		}
		// With a session the second request is served from the cache and
		// must give the same bytes.
		l := NewLayer3(sum, 0)
		first := runFuzzStep(t, apply(l, "s"), body)
		if second := runFuzzStep(t, apply(l, "s"), body); !bytes.Equal(first, second) || !bytes.Equal(first, out) {
			t.Errorf("cached summary gave different bytes")
		}
		// A session growing request by request, forked when over a limit:
		// cached summaries are resumed or extended, and every request must
		// come out valid and no larger.
		l = NewLayer3(sum, 0)
		limit := Estimator{}.Raw(in) / 2
		over := func(r *anthropic.Request) bool { return Estimator{}.Raw(r) > limit }
		prefixes := append(userPrefixes(body), body)
		for _, prefix := range prefixes[max(0, len(prefixes)-8):] {
			r := mustParseT(t, prefix)
			if _, err := l.Apply(context.Background(), r, "grow", over); err != nil {
				t.Fatalf("Layer3.Apply: %v", err)
			}
			o := r.Encode()
			if len(o) > len(prefix) {
				t.Errorf("session request grew: %d -> %d bytes", len(prefix), len(o))
			}
			for _, p := range validate(prefix, o) {
				t.Errorf("session request: %s\nin:  %s\nout: %s", p, prefix, o)
			}
		}
	})
}

// FuzzStepsOnAnyRequest feeds raw bytes to every step: whatever parses
// (anthropic.FuzzParseRequest checks the parser itself) must survive each
// step without a panic, a valid body must stay valid JSON, and the input must
// never be written to.
func FuzzStepsOnAnyRequest(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{
		`{}`, `{"messages":[]}`, `{"messages":null}`, `{"messages":[{"role":"user","content":null}]}`,
		`{"messages":[{"role":"user","content":"a","content":[{"type":"text","text":"b"}]}],"messages":[{"role":"user","content":"c"}]}`,
		`{"messages":[{"role":"assistant","content":[1,"x",{"type":"tool_use"}]},{"role":"user","content":[{"type":"tool_result","content":{}}]}]}`,
		` {"messages" : [ {"role" : "user" , "content" : [ {"type" : "text" , "text" : "a\"\\"} ] } ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		if _, err := anthropic.ParseRequest(body); err != nil {
			return
		}
		for _, s := range []stepFn{
			func(r *anthropic.Request) { NewCompressor(CompressorOptions{MaxChars: 50, LargeChars: 60}).Apply(r) },
			func(r *anthropic.Request) { NewLayer1(1, 0).Apply(r, "s", nil) },
			func(r *anthropic.Request) { ElideThinking(r, 1) },
			func(r *anthropic.Request) { Purify(r) },
			func(r *anthropic.Request) {
				if _, err := NewLayer3(shortSummarizer{percent: 50}, 0).Apply(context.Background(), r, "s", nil); err != nil {
					t.Fatal(err)
				}
			},
			func(r *anthropic.Request) { Estimator{}.Estimate(r) },
		} {
			out := runFuzzStep(t, s, body)
			if json.Valid(body) && !json.Valid(out) {
				t.Fatalf("a step made invalid JSON of a valid body:\nin:  %s\nout: %s", body, out)
			}
		}
		if !bytes.Equal(body, orig) {
			t.Fatalf("input modified")
		}
	})
}
