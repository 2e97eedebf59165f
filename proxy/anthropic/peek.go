// Package anthropic holds what the proxy needs to know about the Messages API
// wire format without decoding whole requests: the hot path only peeks at a few
// top-level fields, and forwards the client's bytes untouched.
package anthropic

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"unicode/utf8"
)

// Peek is what the proxy reads from a request body before forwarding it.
type Peek struct {
	Model  string
	Stream bool
	// UserID is metadata.user_id; Claude Code puts its session id there.
	UserID string
}

// SyntaxError reports malformed JSON with the byte offset of the problem.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

const maxDepth = 512

// PeekRequest validates the JSON structure of body and extracts Peek fields.
// It is a single pass that skips over string contents with bytes.IndexByte, so
// an 800 KB Claude Code request costs tens of microseconds, not the
// milliseconds a full decode would. It checks structure (brackets, commas,
// colons, literals, numbers) everywhere; string contents are checked only in
// the fields it reads, and the upstream still validates the rest.
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
			v, err := s.stringValue("model")
			p.Model = v
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

// scanner walks b[:n]. When it needs a byte past n it reads more from r into
// b, so scanning overlaps the body's arrival instead of following it.
type scanner struct {
	b       []byte
	i, n    int
	r       io.Reader
	readErr error
}

// more reports whether b[i] is available, reading more input if needed.
func (s *scanner) more() bool { return s.i < s.n || s.fill() }

// fill reads at least one more byte into b; false at the end of input.
func (s *scanner) fill() bool {
	for s.r != nil && s.n < len(s.b) {
		m, err := s.r.Read(s.b[s.n:])
		s.n += m
		if err != nil {
			if err != io.EOF {
				s.readErr = err
			}
			s.r = nil
		}
		if m > 0 {
			return true
		}
	}
	return false
}

func (s *scanner) fail(msg string) error { return &SyntaxError{Offset: s.i, Msg: msg} }

func (s *scanner) ws() {
	for s.more() {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object scans an object starting at '{', calling member for each key with the
// scanner positioned at the member's value; member must consume the value.
func (s *scanner) object(depth int, member func(key []byte) error) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	s.i++ // '{'
	s.ws()
	if s.more() && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		if !s.more() || s.b[s.i] != '"' {
			return s.fail("expected a string key")
		}
		start := s.i + 1
		if err := s.skipString(); err != nil {
			return err
		}
		key := s.b[start : s.i-1]
		s.ws()
		if !s.more() || s.b[s.i] != ':' {
			return s.fail("expected ':' after object key")
		}
		s.i++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		if !s.more() {
			return s.fail("unexpected end of JSON in object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return nil
		default:
			return s.fail("expected ',' or '}' in object")
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > maxDepth {
		return s.fail("nesting too deep")
	}
	s.i++ // '['
	s.ws()
	if s.more() && s.b[s.i] == ']' {
		s.i++
		return nil
	}
	for {
		if err := s.value(depth + 1); err != nil {
			return err
		}
		s.ws()
		if !s.more() {
			return s.fail("unexpected end of JSON in array")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			return nil
		default:
			return s.fail("expected ',' or ']' in array")
		}
	}
}

// value skips any JSON value, validating its structure.
func (s *scanner) value(depth int) error {
	if !s.more() {
		return s.fail("unexpected end of JSON; expected a value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{':
		return s.object(depth, func([]byte) error { return s.value(depth + 1) })
	case c == '[':
		return s.array(depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case s.literal("true"), s.literal("false"), s.literal("null"):
		return nil
	default:
		return s.fail(fmt.Sprintf("invalid character %q looking for a value", c))
	}
}

func (s *scanner) literal(lit string) bool {
	for s.n-s.i < len(lit) && s.fill() {
	}
	if bytes.HasPrefix(s.b[s.i:s.n], []byte(lit)) {
		s.i += len(lit)
		return true
	}
	return false
}

// skipString moves past a string starting at '"'. Escaped quotes are found by
// counting the backslashes before each candidate quote.
func (s *scanner) skipString() error {
	start := s.i + 1
	i := start
	for {
		end := indexQuote(s.b[:s.n], i)
		if end < 0 {
			// The closing quote may not have arrived yet.
			i = s.n
			if !s.fill() {
				s.i = s.n
				return s.fail("unterminated string")
			}
			continue
		}
		backslashes := 0
		for k := end - 1; k >= start && s.b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			s.i = end + 1
			return nil
		}
		i = end + 1
	}
}

// indexQuote finds the next '"' at or after i. Code in tool results has a
// quote every few dozen bytes, where the call overhead of bytes.IndexByte
// dominates; a word-at-a-time (SWAR) probe handles short distances and
// IndexByte's vector loop takes over for long runs.
func indexQuote(b []byte, i int) int {
	const ones, highs, quotes = 0x0101010101010101, 0x8080808080808080, 0x2222222222222222
	for n := 0; n < 8 && i+8 <= len(b); n++ {
		x := binary.LittleEndian.Uint64(b[i:]) ^ quotes
		// Lowest set bit marks the first zero byte of x, i.e. the first quote.
		if t := (x - ones) &^ x & highs; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		i += 8
	}
	if j := bytes.IndexByte(b[i:], '"'); j >= 0 {
		return i + j
	}
	return -1
}

// stringValue reads a string value fully (it is small: a model name or id).
func (s *scanner) stringValue(field string) (string, error) {
	if !s.more() {
		return "", s.fail("unexpected end of JSON; expected a value")
	}
	if s.b[s.i] != '"' {
		if s.literal("null") {
			return "", nil
		}
		return "", s.fail(field + ": must be a string")
	}
	start := s.i
	if err := s.skipString(); err != nil {
		return "", err
	}
	raw := s.b[start:s.i]
	// Fast path for the usual plain string; escapes and invalid UTF-8 (which
	// encoding/json replaces with U+FFFD) take the decoder.
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", &SyntaxError{Offset: start, Msg: field + ": invalid string"}
	}
	return v, nil
}

func (s *scanner) number() error {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.more() && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.more() && s.b[s.i] == '0' {
		s.i++
	} else if digits() == 0 {
		s.i = start
		return s.fail("invalid number")
	}
	if s.more() && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return s.fail("invalid number: digits expected after '.'")
		}
	}
	if s.more() && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.more() && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return s.fail("invalid number: digits expected in exponent")
		}
	}
	return nil
}

// IsSyntaxError reports whether err came from malformed JSON.
func IsSyntaxError(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}
