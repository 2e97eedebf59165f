package anthropic_test

import (
	"bufio"
	"bytes"
	"reflect"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/proxytest"
	"longhaul/proxy/sse"
)

// TestReplyFactsStreamAndBodyAgree reads one message as the API streams it
// and as it returns it whole: the proxy must record the same facts of both.
func TestReplyFactsStreamAndBodyAgree(t *testing.T) {
	msgs := []struct {
		name  string
		msg   *proxytest.Message
		pairs []string // ToolUseSignatures
	}{
		{"text", proxytest.TextMessage(proxytest.DefaultModel, "Hello."), nil},
		{"thinking then tools", &proxytest.Message{Content: []proxytest.Block{
			proxytest.Thinking("Look first.", "EqSig-one"),
			proxytest.ToolUse("toolu_1", "Read", map[string]any{"path": "/a.go"}),
			proxytest.Thinking("Then grep.", "EqSig-two"),
			proxytest.ToolUse("toolu_2", "Grep", map[string]any{"q": "tool_use"}),
		}, Usage: proxytest.Usage{InputTokens: 1200, OutputTokens: 87, CacheReadInputTokens: 900, CacheCreationInputTokens: 40}}, []string{"EqSig-one", "EqSig-two"}},
	}
	for _, tt := range msgs {
		t.Run(tt.name, func(t *testing.T) {
			var stream, body anthropic.ReplyFacts
			rd := sse.NewReader(bufio.NewReader(bytes.NewReader(tt.msg.SSE())), 0)
			for ev, err := rd.Next(); err == nil; ev, err = rd.Next() {
				stream.Event(ev.Name, ev.Data)
			}
			if !stream.Stopped {
				t.Errorf("Event(…) saw no message_stop in %q", tt.msg.SSE())
			}
			if !reflect.DeepEqual(stream.ToolUseSignatures, tt.pairs) {
				t.Errorf("Event(…).ToolUseSignatures = %q; want %q", stream.ToolUseSignatures, tt.pairs)
			}
			stream.Stopped = false
			if !body.Body(tt.msg.JSON()) || !reflect.DeepEqual(stream, body) {
				t.Errorf("Body(%q) = %+v; want the stream's %+v", tt.msg.JSON(), body, stream)
			}
		})
	}
}
