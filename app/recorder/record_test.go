package recorder

import (
	"reflect"
	"testing"
	"time"

	"longhaul/proxy"
	"longhaul/proxy/compact"
	"longhaul/store"
)

func TestRecordMapsEveryField(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	ex := proxy.Exchange{
		ID: "lh_1", ParentID: "lh_0", ReplayOf: "lh_r", State: proxy.ExchangeFinished, Route: "messages", Method: "POST", Path: "/v1/messages",
		ClientProtocol: proxy.ProtocolOpenAIChat, UpstreamProtocol: "anthropic",
		UserAgent: "claude-cli/2.1", RemoteAddr: "127.0.0.1:4000", Model: "claude-opus-4-1", ModelSent: "claude-opus-4-1-x",
		Stream: true, SessionID: "s1", Start: t0, FirstByte: t0.Add(300 * time.Millisecond), End: t0.Add(4 * time.Second),
		Status: 200, ErrorType: "", StreamOutcome: "complete", StopReason: "tool_use",
		Usage:      proxy.Usage{InputTokens: 10, OutputTokens: 20, CacheReadInputTokens: 30, CacheCreationInputTokens: 40},
		Signatures: []string{"sig1", "sig2"},
		ToolUseIDs: []string{"toolu_1"},
		Tools:      31, ToolTokens: 7000, ToolsCalled: []string{"read_file"},
		ContextLimit: 200000, TokensBefore: 150000, TokensAfter: 90000, PressureBefore: 0.75, PressureAfter: 0.45,
		Compaction: []proxy.CompactionStep{
			{Layer: "tool-results", TokensBefore: 150000, TokensAfter: 120000, RawBefore: 140000, RawAfter: 110000, Items: 4, Duration: time.Millisecond},
			{Layer: "Layer-3", TokensBefore: 120000, TokensAfter: 90000, Items: 80, Duration: time.Second, CacheHit: true, Edits: []compact.Edit{
				{Kind: compact.EditSummarised, Message: 2, Through: 81, Block: -1, Count: 80, TokensBefore: 30000, Before: "user: fix the parser"},
				{Kind: compact.EditSummaryAdded, Message: -1, Through: -1, Block: -1, Count: 1, TokensAfter: 700, After: "user: Summary: …"},
			}},
			// The proxy's steps: in the ledger, but no compaction: no layer, and the tokens the
			// model-map step claims (never true of a real one) are not counted as saved.
			{Layer: proxy.StepModelMap, TokensBefore: 90000, TokensAfter: 1, Items: 1, Edits: []compact.Edit{
				{Kind: compact.EditModelRenamed, Message: -1, Through: -1, Block: -1, Count: 1, Before: "claude-opus-4-1", After: "claude-opus-4-1-x", Note: "proxy.model_map"},
			}},
			{Layer: proxy.StepTranslate, Items: 1, Edits: []compact.Edit{
				{Kind: compact.EditTranslated, Message: -1, Through: -1, Block: -1, Count: 1, Before: "openai-chat", After: "anthropic", Note: "Chat Completions → Messages"},
			}},
		},
		SignatureRecoveries: 3, CrossModelDropped: 1,
		RequestBody: []byte(`{"a":1}`), ForwardedBody: []byte(`{"a":2}`), ReplyBody: []byte(`{"reply":"0123456789"}`),
		Attempts: []proxy.Attempt{
			{AccountID: 1, AccountName: "a", Status: 529, Error: "overloaded", Start: t0, Duration: 50 * time.Millisecond},
			{AccountID: 2, AccountName: "b", Status: 200, Start: t0.Add(100 * time.Millisecond), Duration: 3 * time.Second},
		},
		BytesIn: 100, BytesOut: 200,
	}
	got := record(&ex, &bodyPolicy{store: true, maxBytes: 12})
	want := store.Exchange{
		ID: "lh_1", ParentID: "lh_0", ReplayOf: "lh_r", State: "finished", Route: "messages", Method: "POST", Path: "/v1/messages",
		ClientProtocol: "openai-chat", UpstreamProtocol: "anthropic",
		UserAgent: "claude-cli/2.1", RemoteAddr: "127.0.0.1:4000", SessionID: "s1", Model: "claude-opus-4-1", ModelSent: "claude-opus-4-1-x",
		Stream: true, AccountID: 2, AccountName: "b", Start: t0, FirstByte: t0.Add(300 * time.Millisecond), End: t0.Add(4 * time.Second),
		Duration: 4 * time.Second, TTFB: 300 * time.Millisecond, Status: 200, StreamOutcome: "complete", StopReason: "tool_use",
		InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheWriteTokens: 40,
		ContextLimit: 200000, TokensBefore: 150000, TokensAfter: 90000, PressureBefore: 0.75, PressureAfter: 0.45,
		Layers: []string{"tool-results", "Layer-3"}, TokensSaved: 60000, SignatureRecoveries: 3, CrossModelDropped: 1,
		Signatures: 2, ToolUseIDs: []string{"toolu_1"}, Tools: 31, ToolTokens: 7000, ToolsCalled: []string{"read_file"}, BytesIn: 100, BytesOut: 200, BodiesTruncated: true,
		Attempts: []store.Attempt{
			{AccountID: 1, AccountName: "a", Status: 529, Error: "overloaded", Start: t0, Duration: 50 * time.Millisecond},
			{AccountID: 2, AccountName: "b", Status: 200, Start: t0.Add(100 * time.Millisecond), Duration: 3 * time.Second},
		},
		Compaction: []store.CompactionStep{
			{Layer: "tool-results", TokensBefore: 150000, TokensAfter: 120000, RawBefore: 140000, RawAfter: 110000, Items: 4, Duration: time.Millisecond},
			{Layer: "Layer-3", TokensBefore: 120000, TokensAfter: 90000, Items: 80, Duration: time.Second, CacheHit: true, Edits: []store.Edit{
				{Kind: "messages-summarised", Message: 2, Through: 81, Block: -1, Count: 80, TokensBefore: 30000, Before: "user: fix the parser"},
				{Kind: "summary-added", Message: -1, Through: -1, Block: -1, Count: 1, TokensAfter: 700, After: "user: Summary: …"},
			}},
			{Layer: "model-map", TokensBefore: 90000, TokensAfter: 1, Items: 1, Edits: []store.Edit{
				{Kind: "model-renamed", Message: -1, Through: -1, Block: -1, Count: 1, Before: "claude-opus-4-1", After: "claude-opus-4-1-x", Note: "proxy.model_map"},
			}},
			{Layer: "translate", Items: 1, Edits: []store.Edit{
				{Kind: "translated", Message: -1, Through: -1, Block: -1, Count: 1, Before: "openai-chat", After: "anthropic", Note: "Chat Completions → Messages"},
			}},
		},
		Bodies: &store.Bodies{Request: `{"a":1}`, Forwarded: `{"a":2}`, Reply: `{"reply":"01`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("record() =\n%+v\nwant\n%+v", got, want)
	}

	for _, tc := range []struct {
		name   string
		state  proxy.ExchangeState
		policy *bodyPolicy
	}{
		{"bodies off", proxy.ExchangeFinished, &bodyPolicy{store: false, maxBytes: 1 << 20}},
		{"started", proxy.ExchangeStarted, &bodyPolicy{store: true, maxBytes: 1 << 20}},
		{"live view", proxy.ExchangeFinished, nil},
	} {
		e := ex
		e.State = tc.state
		if got := record(&e, tc.policy); got.Bodies != nil {
			t.Errorf("%s: bodies = %+v; want none", tc.name, got.Bodies)
		}
	}
}

// The live feed carries records straight from record, never read back from the store: they
// must say whether they failed by the store's rule, as rows read back do.
func TestRecordSaysWhetherItFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ex   proxy.Exchange
		want bool
	}{
		{"in flight", proxy.Exchange{State: proxy.ExchangeStarted}, false},
		{"complete stream", proxy.Exchange{State: proxy.ExchangeFinished, Status: 200, StreamOutcome: "complete"}, false},
		{"upstream error event", proxy.Exchange{State: proxy.ExchangeFinished, Status: 200, StreamOutcome: "upstream_error"}, true},
		{"no account", proxy.Exchange{State: proxy.ExchangeFinished, Status: 503, ErrorType: "overloaded_error"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := record(&tc.ex, nil).Failed; got != tc.want {
				t.Errorf("record(%s).Failed = %t; want %t", tc.name, got, tc.want)
			}
		})
	}
}
