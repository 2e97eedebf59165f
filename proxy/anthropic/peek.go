package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
)

// Peek is what the proxy reads from a request body before forwarding it.
type Peek struct {
	Model  string
	Stream bool
	// UserID is metadata.user_id; Claude Code puts its session id there.
	UserID string
	// Where things are in the body, so the proxy can splice (a mapped model)
	// or hash (a session without user id) without decoding the rest.
	ModelSpan, SystemSpan, FirstMessageSpan Span
	// ThinkingSpan is the top-level thinking config; ToolsSpan the tool definitions and
	// Tools how many there are (the monitor's tool inventory).
	ThinkingSpan Span
	ToolsSpan    Span
	Tools        int
	// Messages describes the content blocks, so the proxy can tell a request
	// the compaction engine would leave alone without parsing it twice.
	Messages MessageStats
}

// Span is a half-open byte range [Start, End) of a JSON value in the body;
// the zero Span means absent.
type Span struct{ Start, End int }

// Of returns the spanned bytes of body (nil when absent).
func (sp Span) Of(body []byte) []byte {
	if sp.End <= sp.Start || sp.End > len(body) {
		return nil
	}
	return body[sp.Start:sp.End]
}

// PeekRequest validates the JSON structure of body and extracts Peek fields.
// It is a single pass that skips over string contents eight bytes at a time
// (see scanString), so an 800 KB Claude Code request costs about a tenth of a
// millisecond, not the milliseconds a full decode would. It checks structure
// (brackets, commas, colons, literals, numbers) everywhere; string contents
// are checked only in the fields it reads, and the upstream still validates
// the rest.
func PeekRequest(body []byte) (Peek, error) {
	return peek(&scanner{b: body, n: len(body)})
}

// ReadError is a failure to read the body (the client went away), as opposed
// to a body that is not valid JSON.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read request body: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// ReadAndPeek fills body (sized to the request's Content-Length) from r while
// peeking at it: the scan consumes each chunk as it arrives. On success the
// whole body has been read; it stops early only at malformed JSON. A failed
// or short read is a *ReadError.
func ReadAndPeek(r io.Reader, body []byte) (Peek, error) {
	s := &scanner{b: body, r: r}
	p, err := peek(s)
	switch {
	case s.readErr != nil:
		return p, &ReadError{s.readErr}
	case err != nil:
		return p, err
	case s.n < len(body):
		return p, &ReadError{io.ErrUnexpectedEOF}
	}
	return p, nil
}

func peek(s *scanner) (Peek, error) {
	var p Peek
	s.ws()
	if !s.more() {
		return p, s.fail("empty body; expected a JSON object")
	}
	if s.b[s.i] != '{' {
		return p, s.fail("request body must be a JSON object")
	}
	err := s.object(0, func(key []byte) error {
		switch string(key) {
		case "model":
			start := s.i
			v, err := s.stringValue("model")
			p.Model, p.ModelSpan = v, Span{start, s.i}
			return err
		case "system":
			start := s.i
			err := s.value(1)
			p.SystemSpan = Span{start, s.i}
			return err
		case "messages":
			p.FirstMessageSpan = Span{} // a repeated key: the last one counts
			p.Messages = MessageStats{}
			s.recall = s.recall.enter()
			if s.more() && s.b[s.i] == '[' {
				var ms msgScan
				err := s.arrayEach(1, func() error {
					start := s.i
					if ms.stats.Count == 0 && s.recall != nil {
						if first, ok := s.recall.skip(s, &ms); ok {
							p.FirstMessageSpan = first
							return nil
						}
					}
					err := s.message(2, &ms)
					if ms.stats.Count == 0 {
						p.FirstMessageSpan = Span{start, s.i}
					}
					ms.next(Span{start, s.i})
					if err == nil && ms.stats.Count > MaxMessages {
						return &TooManyMessagesError{Field: "messages"}
					}
					if s.recall != nil && err == nil {
						s.recall.mark(s.i, &ms)
					}
					return err
				})
				p.Messages = ms.done()
				return err
			}
			return s.value(1)
		case "thinking":
			start := s.i
			err := s.value(1)
			p.ThinkingSpan = Span{start, s.i}
			return err
		case "tools":
			start := s.i
			if !s.more() || s.b[s.i] != '[' {
				return s.value(1)
			}
			err := s.arrayEach(1, func() error {
				p.Tools++
				return s.value(2)
			})
			p.ToolsSpan = Span{start, s.i}
			return err
		case "stream":
			switch {
			case s.literal("true"):
				p.Stream = true
			case s.literal("false"):
				p.Stream = false
			case s.literal("null"):
			default:
				return s.fail("stream: must be a boolean")
			}
			return nil
		case "metadata":
			if s.more() && s.b[s.i] == '{' {
				return s.object(1, func(key []byte) error {
					if string(key) == "user_id" && s.more() && s.b[s.i] == '"' {
						v, err := s.stringValue("metadata.user_id")
						p.UserID = v
						return err
					}
					return s.value(2)
				})
			}
			return s.value(1)
		}
		return s.value(1)
	})
	if err != nil {
		return p, err
	}
	s.ws()
	if s.more() {
		return p, s.fail("unexpected data after the JSON object")
	}
	return p, nil
}

// WithModel returns a copy of body with the value at span (a Peek's
// ModelSpan) replaced by the JSON string model: every other byte is the
// client's, so a mapped model costs the prompt cache nothing.
func WithModel(body []byte, span Span, model string) []byte {
	quoted, _ := json.Marshal(model) //nolint:errcheck // a string always encodes
	buf := make([]byte, 0, len(body)-(span.End-span.Start)+len(quoted))
	return append(append(append(buf, body[:span.Start]...), quoted...), body[span.End:]...)
}

// MaxMessages is the most messages a request may hold: the Messages API's own limit ("There is
// a limit of 100,000 messages in a single request"), which every upstream request of the proxy
// is translated from or into. A peek refuses more as soon as it has counted them, before the
// rest of the body arrives: everything after the peek (the recall, a translation, the
// compaction engine) keeps something per message, and a body of one-letter messages has one
// every 30 bytes (the security issue: 900k of them in 29 MB took the process to 21x the body).
const MaxMessages = 100_000

// TooManyMessagesError is a request with more than MaxMessages messages (or, in another
// protocol, entries of what becomes messages: Chat messages, Responses input items, Gemini
// contents). Field names them as the client's protocol does.
type TooManyMessagesError struct{ Field string }

func (e *TooManyMessagesError) Error() string {
	return fmt.Sprintf("%s: more than %d entries; a request may hold at most %d messages (the Messages API's limit)", e.Field, MaxMessages, MaxMessages)
}
