package proxytest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ClaudeCodeRequest builds a deterministic request shaped like what Claude Code
// sends late in a long session: a system prompt with cache_control, ~25 tool
// definitions, thinking config, metadata.user_id, and alternating tool rounds
// (signed thinking + tool_use, then tool_result) until the body reaches about
// size bytes. The bytes are generated once and are never re-encoded by the
// proxy under test, so key order and formatting are what a client would send.
func ClaudeCodeRequest(size int, stream bool) []byte {
	tools := make([]map[string]any, 0, 25)
	for i := range 25 {
		tools = append(tools, map[string]any{
			"name":        fmt.Sprintf("Tool%02d", i),
			"description": strings.Repeat("Performs an operation on the workspace. ", 12),
			"input_schema": map[string]any{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}},
				"required":   []string{"path"},
			},
		})
	}
	toolsJSON, _ := json.Marshal(tools)
	var b strings.Builder
	b.Grow(size + 64<<10)
	fmt.Fprintf(&b, `{"model":"claude-sonnet-4-5-20250929","max_tokens":32000,"stream":%t,`, stream)
	b.WriteString(`"metadata":{"user_id":"user_3f2a_account_9c1e_session_6d0b8f3e-1111-4222-8333-944455556666"},`)
	b.WriteString(`"thinking":{"type":"enabled","budget_tokens":10000},`)
	b.WriteString(`"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},`)
	fmt.Fprintf(&b, `{"type":"text","text":%q}],`, strings.Repeat("Follow the repository conventions. ", 300))
	b.WriteString(`"tools":`)
	b.Write(toolsJSON)
	b.WriteString(`,"messages":[{"role":"user","content":[{"type":"text","text":"Refactor the store package and fix the failing tests."}]}`)
	// Tool results are sized so the whole request lands near size with ~150 messages.
	resultLen := max(200, size/75-600)
	for round := 0; b.Len() < size; round++ {
		id := fmt.Sprintf("toolu_%024d", round)
		fmt.Fprintf(&b, `,{"role":"assistant","content":[{"type":"thinking","thinking":%q,"signature":"%s"},`,
			fmt.Sprintf("Round %d: I should inspect the next file before editing it.", round), signature(round))
		fmt.Fprintf(&b, `{"type":"tool_use","id":"%s","name":"Tool%02d","input":{"path":"/src/file_%d.go","limit":2000}}]}`, id, round%25, round)
		body := strings.Repeat(fmt.Sprintf("%6d\tfunc line%d() { return \"héllo, 世界\" } // \\ \"quoted\"\n", round, round), resultLen/60+1)
		bodyJSON, _ := json.Marshal(body[:min(len(body), resultLen)])
		fmt.Fprintf(&b, `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","content":%s}]}`, id, bodyJSON)
	}
	b.WriteString(`,{"role":"user","content":[{"type":"text","text":"continue","cache_control":{"type":"ephemeral"}}]}]}`)
	return []byte(b.String())
}

// signature is a deterministic stand-in for an upstream thinking signature
// (base64-looking, the length real ones have).
func signature(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	x := uint32(n*2654435761 + 1)
	for range 344 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b.WriteByte(alphabet[x%64])
	}
	return "Eq" + b.String()
}
