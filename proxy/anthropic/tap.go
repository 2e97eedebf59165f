package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
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
// body that is not leaves the facts untouched. A reply as the API writes it
// is walked in place (bodyFast); anything unusual in it takes encoding/json,
// whose reading is the reference: FuzzReplyFactsBody holds the two equal on
// JSON. (On a body encoding/json rejects only for a control character in a
// string Body skips, such as a text block's, the facts are still read.)
func (f *ReplyFacts) Body(body []byte) bool {
	if r, ok := bodyFast(body); ok {
		f.apply(r)
		return true
	}
	r, ok := bodyDecoded(body)
	if ok {
		f.apply(r)
	}
	return ok
}

// replyBody is what Body reads of a reply.
type replyBody struct {
	StopReason string `json:"stop_reason"`
	Usage      Usage  `json:"usage"`
	Content    []struct {
		Type, ID, Name, Signature string
	} `json:"content"`
}

func (f *ReplyFacts) apply(r replyBody) {
	f.StopReason, f.Usage = r.StopReason, r.Usage
	for _, c := range r.Content {
		switch {
		case c.Type == "thinking" && c.Signature != "":
			f.Signatures = append(f.Signatures, c.Signature)
		case c.Type == "tool_use":
			f.toolUse(c.ID, c.Name)
		}
	}
}

func bodyDecoded(body []byte) (replyBody, bool) {
	var r replyBody
	return r, json.Unmarshal(body, &r) == nil
}

// errUnusual sends a reply to encoding/json: something bodyFast does not read the way it
// does (an escaped or differently-cased key, a repeated member, a value of another type).
var errUnusual = errors.New("unusual reply")

// bodyFast reads a reply without decoding what Body does not need; ok is false when the body
// is unusual or not JSON (then encoding/json decides).
func bodyFast(body []byte) (r replyBody, ok bool) {
	var seen uint8
	end, err := walkObject(body, 0, func(key []byte, vi int) (int, error) {
		k, err := replyField(key, &seen, replyFields[:])
		switch {
		case err != nil:
			return 0, err
		case k < 0:
			return skipValue(body, vi)
		case k == 0:
			return plainString(body, vi, &r.StopReason)
		case k == 1:
			return usageFast(body, vi, &r.Usage)
		}
		if isNull(body, vi) {
			return vi + 4, nil
		}
		return walkArray(body, vi, func(bi int) (int, error) {
			r.Content = append(r.Content, struct{ Type, ID, Name, Signature string }{})
			c := &r.Content[len(r.Content)-1]
			if isNull(body, bi) {
				return bi + 4, nil
			}
			dsts := [...]*string{&c.Type, &c.ID, &c.Name, &c.Signature}
			var seen uint8
			return walkObject(body, bi, func(key []byte, vi int) (int, error) {
				k, err := replyField(key, &seen, blockFields[:])
				switch {
				case err != nil:
					return 0, err
				case k < 0:
					return skipValue(body, vi)
				}
				return plainString(body, vi, dsts[k])
			})
		})
	})
	if err != nil || skipWS(body, end) != len(body) {
		return replyBody{}, false
	}
	return r, true
}

// The members bodyFast reads, by the index replyField returns.
var (
	replyFields = [...]string{"stop_reason", "usage", "content"}
	blockFields = [...]string{"type", "id", "name", "signature"}
	usageFields = [...]string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}
)

// replyField returns which of names the raw key is (-1: none) and marks it seen; a key seen
// before, or one encoding/json would match to a name though it is not written as it (escaped,
// in other case), makes the reply unusual.
func replyField(key []byte, seen *uint8, names []string) (int, error) {
	for i, n := range names {
		if keyIs(key, n) {
			if *seen&(1<<i) != 0 {
				return 0, errUnusual
			}
			*seen |= 1 << i
			return i, nil
		}
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		return 0, errUnusual
	}
	for _, n := range names {
		if len(key) == len(n)+2 && bytes.EqualFold(key[1:len(key)-1], []byte(n)) {
			return 0, errUnusual
		}
	}
	return -1, nil
}

func isNull(b []byte, i int) bool { return bytes.HasPrefix(b[i:], []byte("null")) }

// plainString reads a JSON string (or null, leaving dst) at b[i] into dst; anything else is
// unusual.
func plainString(b []byte, i int, dst *string) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	if i >= len(b) || b[i] != '"' {
		return 0, errUnusual
	}
	end, err := skipValue(b, i)
	if err != nil {
		return 0, err
	}
	raw := b[i:end]
	for _, c := range raw {
		if c < ' ' || c == '\\' || c >= utf8.RuneSelf {
			// Escapes, controls, non-ASCII: encoding/json's reading is the one to have.
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return 0, errUnusual
			}
			*dst = v
			return end, nil
		}
	}
	*dst = string(raw[1 : len(raw)-1])
	return end, nil
}

// usageFast reads the usage object's four counts, each an integer or null.
func usageFast(b []byte, i int, u *Usage) (int, error) {
	if isNull(b, i) {
		return i + 4, nil
	}
	dsts := [...]*int64{&u.InputTokens, &u.OutputTokens, &u.CacheReadInputTokens, &u.CacheCreationInputTokens}
	var seen uint8
	return walkObject(b, i, func(key []byte, vi int) (int, error) {
		k, err := replyField(key, &seen, usageFields[:])
		switch {
		case err != nil:
			return 0, err
		case k < 0:
			return skipValue(b, vi)
		case isNull(b, vi):
			return vi + 4, nil
		}
		end, err := skipValue(b, vi)
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(string(b[vi:end]), 10, 64)
		if err != nil {
			return 0, errUnusual // a fraction, an exponent, a string, out of range
		}
		*dsts[k] = n
		return end, nil
	})
}
