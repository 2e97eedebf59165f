package anthropic

import (
	"bytes"
	"encoding/json"
)

// Usage is a reply's token accounting, as the API reports it.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// merge takes the cumulative counts message_delta carries; zero means "not
// reported here" (older API versions only send output_tokens).
func (u *Usage) merge(d Usage) {
	for _, f := range []struct{ dst, src *int64 }{
		{&u.InputTokens, &d.InputTokens}, {&u.OutputTokens, &d.OutputTokens},
		{&u.CacheReadInputTokens, &d.CacheReadInputTokens}, {&u.CacheCreationInputTokens, &d.CacheCreationInputTokens},
	} {
		if *f.src != 0 {
			*f.dst = *f.src
		}
	}
}

// ReplyFacts is what the proxy records of a Messages reply, read as it
// passes: accounting for the monitor and the pool, signatures and tool ids
// for the signature cache.
type ReplyFacts struct {
	Usage      Usage
	StopReason string
	// Signatures are the thinking signatures issued, in order; ToolUseIDs the
	// tool_use blocks opened, and ToolUseSignatures[i] the signature in effect
	// when ToolUseIDs[i] opened ("" when none).
	Signatures        []string
	ToolUseIDs        []string
	ToolUseSignatures []string
	// ToolUseNames[i] is the name of the tool ToolUseIDs[i] called.
	ToolUseNames []string
	// Stopped reports message_stop: the stream ended as the API ends one.
	Stopped bool
	// Error is the stream's error event, nil when none came (its fields are
	// empty when the event was malformed).
	Error *ErrorDetail
}

// toolUse records a tool_use block and the signature in effect when it opened.
func (f *ReplyFacts) toolUse(id, name string) {
	sig := ""
	if n := len(f.Signatures); n > 0 {
		sig = f.Signatures[n-1]
	}
	f.ToolUseIDs = append(f.ToolUseIDs, id)
	f.ToolUseNames = append(f.ToolUseNames, name)
	f.ToolUseSignatures = append(f.ToolUseSignatures, sig)
}

var (
	signatureDelta = []byte(`"signature_delta"`)
	toolUseBlock   = []byte(`"tool_use"`)
)

// Event reads one SSE event of a stream and reports whether it added to the
// facts, so a caller that mirrors them copies only then. Only the few kinds
// that carry facts are decoded, and a delta only when a byte search says it
// is a signature: text deltas are most of a stream and are never parsed.
func (f *ReplyFacts) Event(name string, data []byte) bool {
	switch name {
	case "message_start":
		f.messageStart(data)
		return true
	case "content_block_start":
		return bytes.Contains(data, toolUseBlock) && f.blockStart(data)
	case "content_block_delta":
		return bytes.Contains(data, signatureDelta) && f.signature(data)
	case "message_delta":
		return f.messageDelta(data)
	case "message_stop":
		f.Stopped = true
		return true
	case "error":
		e, _ := ParseError(data) // malformed: still an error, without a type
		f.Error = &e
		return true
	}
	return false
}

func (f *ReplyFacts) messageStart(data []byte) {
	var v struct {
		Message struct {
			Usage *Usage `json:"usage"`
		} `json:"message"`
	}
	v.Message.Usage = &f.Usage
	json.Unmarshal(data, &v) //nolint:errcheck // a malformed event only loses accounting
}

func (f *ReplyFacts) blockStart(data []byte) bool {
	var v struct {
		Block struct{ Type, ID, Name string } `json:"content_block"`
	}
	if json.Unmarshal(data, &v) != nil || v.Block.Type != "tool_use" {
		return false
	}
	f.toolUse(v.Block.ID, v.Block.Name)
	return true
}

func (f *ReplyFacts) signature(data []byte) bool {
	var v struct {
		Delta struct{ Type, Signature string } `json:"delta"`
	}
	if json.Unmarshal(data, &v) != nil || v.Delta.Type != "signature_delta" {
		return false
	}
	f.Signatures = append(f.Signatures, v.Delta.Signature)
	return true
}

func (f *ReplyFacts) messageDelta(data []byte) bool {
	var v struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		} `json:"delta"`
		Usage Usage `json:"usage"`
	}
	if json.Unmarshal(data, &v) != nil {
		return false
	}
	f.StopReason = v.Delta.StopReason
	f.Usage.merge(v.Usage)
	return true
}

// Body reads a whole non-stream reply and reports whether it was one; a
// body that is not leaves the facts untouched.
func (f *ReplyFacts) Body(body []byte) bool {
	var v struct {
		StopReason string `json:"stop_reason"`
		Usage      Usage  `json:"usage"`
		Content    []struct {
			Type, ID, Name, Signature string
		} `json:"content"`
	}
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	f.StopReason, f.Usage = v.StopReason, v.Usage
	for _, c := range v.Content {
		switch {
		case c.Type == "thinking" && c.Signature != "":
			f.Signatures = append(f.Signatures, c.Signature)
		case c.Type == "tool_use":
			f.toolUse(c.ID, c.Name)
		}
	}
	return true
}
