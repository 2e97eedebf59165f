package proxytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode"
)

// The scripted upstream's own tokenizer. Its rules are deliberately unlike Longhaul's
// estimator (proxy/compact/estimate.go counts bytes by character class): it counts words and
// punctuation runs of the decoded text, so the ratio between the two moves with the kind of
// text (prose, code, JSON, CJK) and calibration has a real difference to learn. Like the real
// API it counts every system block, tool definition, text, thinking (the signature is opaque
// and free), tool input and tool result, plus fixed overheads for the framing.
const (
	requestTokens  = 7    // every request: the prompt's framing
	messageTokens  = 3    // every message: its role turn
	blockTokens    = 5    // every content block, system block and nested tool_result block
	toolTokens     = 8    // every tool definition
	imageTokens    = 1500 // an image of any size
	documentTokens = 2500 // a PDF or other binary document
	wordPiece      = 5    // a word of n letters or digits is ⌈n/5⌉ tokens
	punctPiece     = 3    // a run of n punctuation or symbol characters is ⌈n/3⌉ tokens
)

// CountTokens is the scripted upstream's count of a Messages request's input tokens: what a
// simulating Upstream reports as usage, refuses beyond its window and answers
// /v1/messages/count_tokens with. It fails only on a body that is not a JSON object of the
// Messages shape.
func CountTokens(body []byte) (int, error) {
	p, err := parsePrompt(body)
	if err != nil {
		return 0, err
	}
	return p.tokens(), nil
}

// textTokens counts s by the tokenizer's rules: a word (letters, digits, marks, '_') of n
// runes is ⌈n/wordPiece⌉ tokens, a run of n other visible characters ⌈n/punctPiece⌉, each Han,
// kana or Hangul character one, and a whitespace run one if it holds a line break, else none.
func textTokens(s string) int {
	n, word, punct := 0, 0, 0
	lineBreak := false // the current whitespace run has been counted for its line break
	end := func() {
		n += (word+wordPiece-1)/wordPiece + (punct+punctPiece-1)/punctPiece
		word, punct = 0, 0
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			end()
			if r == '\n' && !lineBreak {
				n++
				lineBreak = true
			}
			continue
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			end()
			n++
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_':
			if punct > 0 {
				end()
			}
			word++
		default:
			if word > 0 {
				end()
			}
			punct++
		}
		lineBreak = false
	}
	end()
	return n
}

// jsonTokens counts a JSON value as the text of its compact form (keys, quotes and braces
// included), the way the tokenizer sees tool inputs and schemas.
func jsonTokens(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return textTokens(string(raw))
	}
	return textTokens(b.String())
}

// prompt is a request as the upstream's tokenizer and prompt cache see it: its blocks in the
// order the API renders them (tools, system, messages), each with its tokens, its content for
// the cache's prefix hash and its cache_control breakpoint.
type prompt struct {
	model  string
	blocks []promptBlock
}

type promptBlock struct {
	tokens int
	// content is the block's JSON without its cache_control (moving a breakpoint does not
	// change the prefix), led by the role on a message's first block so that how blocks are
	// grouped into messages is part of the prefix too.
	content    []byte
	breakpoint *cacheControl // nil: no cache_control on this block
}

type cacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"` // "5m" (the default) or "1h"
}

// tokens is the whole request's count.
func (p *prompt) tokens() int {
	n := requestTokens
	for _, b := range p.blocks {
		n += b.tokens
	}
	return n
}

// messagesRequest is what the tokenizer reads of a Messages request.
type messagesRequest struct {
	Model    string            `json:"model"`
	System   json.RawMessage   `json:"system"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	// CacheControl at the top level is automatic caching: a breakpoint on the last block.
	CacheControl *cacheControl `json:"cache_control"`
}

func parsePrompt(body []byte) (*prompt, error) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("parse request: %w", err)
	}
	p := &prompt{model: req.Model}
	for i, raw := range req.Tools {
		b, err := toolBlock(raw)
		if err != nil {
			return nil, fmt.Errorf("parse tools.%d: %w", i, err)
		}
		p.blocks = append(p.blocks, b)
	}
	if len(req.System) > 0 && string(req.System) != "null" {
		blocks, err := contentBlocks(req.System, "system")
		if err != nil {
			return nil, fmt.Errorf("parse system: %w", err)
		}
		p.blocks = append(p.blocks, blocks...)
	}
	for i, m := range req.Messages {
		blocks, err := contentBlocks(m.Content, m.Role)
		if err != nil {
			return nil, fmt.Errorf("parse messages.%d.content: %w", i, err)
		}
		if len(blocks) == 0 { // an empty message still takes a turn
			blocks = []promptBlock{{content: []byte(m.Role + "\x00")}}
		}
		blocks[0].tokens += messageTokens
		p.blocks = append(p.blocks, blocks...)
	}
	if cc := req.CacheControl; cc != nil && len(p.blocks) > 0 && p.blocks[len(p.blocks)-1].breakpoint == nil {
		p.blocks[len(p.blocks)-1].breakpoint = cc
	}
	return p, nil
}

// contentBlocks reads a system prompt or message content: a string is one text block. The
// first block's content is led by role.
func contentBlocks(raw json.RawMessage, role string) ([]promptBlock, error) {
	lead := []byte(role + "\x00")
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []promptBlock{{tokens: blockTokens + textTokens(s), content: append(lead, raw...)}}, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("want a string or an array of blocks: %w", err)
	}
	out := make([]promptBlock, 0, len(elems))
	for i, e := range elems {
		fields, cc, canonical, err := splitBlock(e)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		if i == 0 {
			canonical = append(lead, canonical...)
		}
		out = append(out, promptBlock{tokens: blockTokens + blockContentTokens(fields, e), content: canonical, breakpoint: cc})
	}
	return out, nil
}

// toolBlock reads a tool definition: name, description and schema, or all of a server tool.
func toolBlock(raw json.RawMessage) (promptBlock, error) {
	fields, cc, canonical, err := splitBlock(raw)
	if err != nil {
		return promptBlock{}, err
	}
	n := toolTokens
	if schema, ok := fields["input_schema"]; ok {
		n += textTokens(stringField(fields, "name")) + textTokens(stringField(fields, "description")) + jsonTokens(schema)
	} else {
		n += jsonTokens(canonical)
	}
	return promptBlock{tokens: n, content: append([]byte("tool\x00"), canonical...), breakpoint: cc}, nil
}

// splitBlock decodes a block's members and takes its cache_control out; canonical is the
// rest, re-encoded (members sorted, values compact).
func splitBlock(raw json.RawMessage) (fields map[string]json.RawMessage, cc *cacheControl, canonical []byte, err error) {
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, nil, fmt.Errorf("want an object: %w", err)
	}
	if c, ok := fields["cache_control"]; ok {
		if string(c) != "null" {
			cc = new(cacheControl)
			if err := json.Unmarshal(c, cc); err != nil {
				return nil, nil, nil, fmt.Errorf("cache_control: %w", err)
			}
		}
		delete(fields, "cache_control")
	}
	canonical, err = json.Marshal(fields)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encode block: %w", err)
	}
	return fields, cc, canonical, nil
}

// blockContentTokens counts a content block's payload (the per-block overhead aside).
func blockContentTokens(fields map[string]json.RawMessage, raw json.RawMessage) int {
	switch stringField(fields, "type") {
	case "text":
		return textTokens(stringField(fields, "text"))
	case "thinking":
		return textTokens(stringField(fields, "thinking"))
	case "redacted_thinking":
		return textTokens(stringField(fields, "data"))
	case "tool_use", "server_tool_use":
		return textTokens(stringField(fields, "name")) + jsonTokens(fields["input"])
	case "image":
		return imageTokens
	case "document":
		var src struct{ Type, Data string }
		if json.Unmarshal(fields["source"], &src) == nil && src.Type == "text" {
			return textTokens(src.Data)
		}
		return documentTokens
	}
	if c, ok := fields["content"]; ok { // tool_result and the server *_tool_result family
		return nestedTokens(c)
	}
	return jsonTokens(raw) // an unknown block: all of it
}

// nestedTokens counts a tool result's content: a string, or blocks.
func nestedTokens(raw json.RawMessage) int {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return textTokens(s)
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return jsonTokens(raw)
	}
	n := 0
	for _, e := range elems {
		var fields map[string]json.RawMessage
		if json.Unmarshal(e, &fields) != nil {
			n += jsonTokens(e)
			continue
		}
		n += blockTokens + blockContentTokens(fields, e)
	}
	return n
}

func stringField(fields map[string]json.RawMessage, name string) string {
	var s string
	json.Unmarshal(fields[name], &s) //nolint:errcheck // a missing or non-string member counts as ""
	return s
}

// CountChatTokens is the scripted Chat upstream's count of a Chat Completions request, by the
// same rules as CountTokens: every message's text parts, name, reasoning and tool calls (name
// and arguments), every tool's function definition, and the framing overheads.
func CountChatTokens(body []byte) (int, error) {
	var req struct {
		Messages []struct {
			Content   json.RawMessage `json:"content"`
			Name      string          `json:"name"`
			Reasoning string          `json:"reasoning_content"`
			ToolCalls []struct {
				Function struct{ Name, Arguments string } `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function json.RawMessage `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, fmt.Errorf("parse request: %w", err)
	}
	n := requestTokens
	for _, m := range req.Messages {
		n += messageTokens + chatContentTokens(m.Content) + textTokens(m.Name) + textTokens(m.Reasoning)
		for _, c := range m.ToolCalls {
			n += blockTokens + textTokens(c.Function.Name) + textTokens(c.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += toolTokens + jsonTokens(t.Function)
	}
	return n, nil
}

// chatContentTokens counts a Chat message's content: a string, or parts.
func chatContentTokens(raw json.RawMessage) int {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) == nil {
		return textTokens(s)
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return jsonTokens(raw)
	}
	n := 0
	for _, p := range parts {
		n += blockTokens
		switch stringField(p, "type") {
		case "text":
			n += textTokens(stringField(p, "text"))
		case "image_url":
			n += imageTokens
		case "file", "input_audio":
			n += documentTokens
		default:
			b, _ := json.Marshal(p)
			n += jsonTokens(b)
		}
	}
	return n
}
