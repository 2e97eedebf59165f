package compact

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
)

func editsOf(res Result, layer Layer) []Edit {
	for _, st := range res.Stats {
		if st.Layer == layer {
			return st.Edits
		}
	}
	return nil
}

func kinds(es []Edit) map[EditKind]int {
	out := map[EditKind]int{}
	for _, e := range es {
		out[e.Kind] += max(e.Count, 1)
	}
	return out
}

// Each layer's ledger names the messages and blocks of the request as received that it changed,
// with what was there before and after.
func TestLedgerNamesWhatEachLayerChanged(t *testing.T) {
	body := proxytest.ClaudeCodeRequest(800<<10, true)
	received := mustParse(t, body)
	p := NewPipeline(Options{Limits: NewLimits(nil, 20_000), Summarizer: &countingSummarizer{}})
	res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}

	l1 := editsOf(res, Layer1Trim)
	if len(l1) == 0 {
		t.Fatal("Layer 1 ran without edits")
	}
	removed := 0
	for _, e := range l1 {
		if e.Kind != EditRoundsRemoved && e.Kind != EditMore {
			t.Errorf("Layer-1 edit %+v; want rounds-removed", e)
			continue
		}
		if e.Kind == EditRoundsRemoved && (e.Message < 1 || e.Through < e.Message || e.Count != e.Through-e.Message+1 || e.TokensBefore <= 0) {
			t.Errorf("Layer-1 span %+v: want received indexes after the first message, tokens counted", e)
		}
		removed += e.Count
	}
	if removed < st(res, Layer1Trim).Items {
		t.Errorf("Layer 1 removed %d rounds but its ledger names %d messages", st(res, Layer1Trim).Items, removed)
	}

	l2 := editsOf(res, Layer2Thinking)
	elided := 0
	for _, e := range l2 {
		if e.Kind == EditMore {
			elided += e.Count
			continue
		}
		if e.Kind != EditThinkingElided || e.After != elidedThinking || e.Before == elidedThinking {
			t.Errorf("Layer-2 edit %+v; want thinking-elided with its text before and \"...\" after", e)
			continue
		}
		b := received.Messages[e.Message].Blocks[e.Block]
		if b.Type != "thinking" || !strings.HasPrefix(b.Thinking(), strings.TrimSuffix(e.Before, "…")) {
			t.Errorf("Layer-2 edit names messages[%d].content[%d] = %s %.40q; want the thinking it elided (%.40q)",
				e.Message, e.Block, b.Type, b.Thinking(), e.Before)
		}
		elided++
	}
	if elided != st(res, Layer2Thinking).Items {
		t.Errorf("Layer 2 elided %d blocks; its ledger names %d", st(res, Layer2Thinking).Items, elided)
	}

	got := kinds(editsOf(res, Layer3Summary))
	if got[EditSummarised] == 0 || got[EditSummaryAdded] == 0 {
		t.Errorf("Layer-3 edits %v; want messages-summarised and summary-added", got)
	}
}

func st(res Result, layer Layer) Stats {
	for _, s := range res.Stats {
		if s.Layer == layer {
			return s
		}
	}
	return Stats{}
}

func TestLedgerOfTheCompressorAndPurify(t *testing.T) {
	big := strings.Repeat("line of build output\n", 15_000)
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"let me look at the logs","signature":"s1"},{"type":"tool_use","id":"tu_1","name":"Bash","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":` + string(anthropic.Quote(big)) + `}]}]}`)
	res, err := NewPipeline(Options{}).Run(context.Background(), Input{Body: body, NoThinking: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := editsOf(res, LayerToolResults)
	if len(tr) != 1 || tr[0].Kind != EditResultShortened || tr[0].Message != 2 || tr[0].Block != 0 ||
		tr[0].Note != "tu_1" || tr[0].TokensAfter >= tr[0].TokensBefore {
		t.Errorf("compressor ledger = %+v; want one result-shortened at messages[2].content[0] for tu_1, smaller", tr)
	}
	pu := editsOf(res, LayerPurify)
	if len(pu) != 1 || pu[0].Kind != EditThinkingRemoved || pu[0].Message != 1 || pu[0].Block != 0 ||
		pu[0].Before != "let me look at the logs" {
		t.Errorf("purify ledger = %+v; want thinking-removed at messages[1].content[0]", pu)
	}
}

type fixedSignatures struct{ sig string }

func (f fixedSignatures) RecoverForTool(string, string) (string, bool)    { return f.sig, true }
func (f fixedSignatures) RecoverForSession(string, string) (string, bool) { return f.sig, true }
func (f fixedSignatures) Compatible(sig, _ string) bool                   { return sig != "foreign" }

func TestLedgerOfSignatureRepair(t *testing.T) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"go"},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"plan","signature":""},{"type":"tool_use","id":"tu_1","name":"Read","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1","content":"ok"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"other","signature":"foreign"},{"type":"text","text":"done"}]},` +
		`{"role":"user","content":"next"}]}`)
	p := NewPipeline(Options{Signatures: fixedSignatures{sig: "restored"}, Repair: RepairOptions{Recover: true, CrossModel: true}})
	res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	got := editsOf(res, LayerSignatures)
	want := []string{"signature-restored messages[1].content[0]", "thinking-dropped messages[3].content[0]"}
	var have []string
	for _, e := range got {
		have = append(have, fmt.Sprintf("%s messages[%d].content[%d]", e.Kind, e.Message, e.Block))
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Errorf("signature ledger = %v; want %v", have, want)
	}
}

// accountedFor checks the ledger's promise on one run: every received message is either
// forwarded byte for byte or named by an edit, and no forwarded message differs from what was
// received without an edit naming it.
func accountedFor(t *testing.T, body []byte, res Result) {
	t.Helper()
	in := mustParse(t, body)
	out := mustParse(t, res.Body)
	named := map[int]bool{}
	for _, s := range res.Stats {
		for _, e := range s.Edits {
			if e.Kind == EditMore {
				t.Logf("limit run cut its ledger at %s", s.Layer)
				return // the ledger was cut; nothing more to check exactly
			}
			for i := e.Message; i >= 0 && i <= e.Through; i++ {
				named[i] = true
			}
		}
	}
	forwarded := map[string]bool{}
	for i := range out.Messages {
		forwarded[string(out.Messages[i].Raw())] = true
	}
	for i := range in.Messages {
		if !named[i] && !forwarded[string(in.Messages[i].Raw())] {
			t.Errorf("received messages[%d] is not forwarded as it came and no edit names it", i)
		}
	}
}

func TestLedgerAccountsForEveryChange(t *testing.T) {
	for _, limit := range []int{200_000, 60_000, 30_000, 20_000} {
		body := proxytest.ClaudeCodeRequest(400<<10, true)
		p := NewPipeline(Options{Limits: NewLimits(nil, limit), Summarizer: &countingSummarizer{}})
		res, err := p.Run(context.Background(), Input{Body: body, Session: "s"})
		if err != nil {
			t.Fatal(err)
		}
		accountedFor(t, body, res)
	}
	body := session(30, "")
	res, err := NewPipeline(Options{}).Run(context.Background(), Input{Body: body, NoThinking: true})
	if err != nil || !res.Changed {
		t.Fatal(err, res.Changed)
	}
	accountedFor(t, body, res)
}

// A step that elides hundreds of blocks keeps a bounded ledger: the rest is counted.
func TestLedgerIsBounded(t *testing.T) {
	body := session(200, "")
	r := mustParse(t, body)
	before := takeSnapshot(nil, r.Messages)
	n := ElideThinking(r, 4)
	edits := diffStep(Layer2Thinking, before, r.Messages, nil, nil)
	if len(edits) != MaxEditsPerStep+1 {
		t.Fatalf("%d edits for %d elisions; want %d and one %q", len(edits), n, MaxEditsPerStep, EditMore)
	}
	more := edits[len(edits)-1]
	if more.Kind != EditMore || more.Count != n-MaxEditsPerStep {
		t.Errorf("last edit %+v; want %q counting %d", more, EditMore, n-MaxEditsPerStep)
	}
	if !bytes.Contains(r.Encode(), []byte(`"thinking":"..."`)) {
		t.Error("nothing elided")
	}
}

// FuzzLedger runs the whole pipeline on generated conversations, with a window small enough for
// some layers to run, and checks the ledger accounts for every change.
func FuzzLedger(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		body := fuzzBody(data)
		limit, noThinking := 4000, false
		if len(data) > 1 {
			limit, noThinking = 500+int(data[0])*40, data[1]%4 == 0
		}
		p := NewPipeline(Options{Limits: NewLimits(nil, limit), Summarizer: shortSummarizer{percent: 30},
			Signatures: fixedSignatures{sig: "restored"}, Repair: RepairOptions{Recover: true, CrossModel: true}})
		res, err := p.Run(context.Background(), Input{Body: body, Session: "s", NoThinking: noThinking})
		if err != nil && !IsSummaryFailure(err) {
			t.Fatal(err)
		}
		if err != nil || !res.Changed {
			return
		}
		accountedFor(t, body, res)
		for _, s := range res.Stats {
			if len(s.Edits) == 0 {
				t.Errorf("%s changed %d items and recorded no edit", s.Layer, s.Items)
			}
		}
	})
}
