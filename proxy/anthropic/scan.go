package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The one JSON scanner of the proxy. It reads raw bytes without decoding
// them: the peek validates a request's structure with it while the body
// arrives, and the slice helpers in raw.go (which the request types, the
// reply builder, the compaction engine and proxytest use) skip values with
// it, so untouched values are re-emitted exactly as they came. String
// contents are skipped eight bytes at a time (swar.go), by everything here.

// SyntaxError reports malformed JSON with the byte offset of the problem.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// IsSyntaxError reports whether err came from malformed JSON.
func IsSyntaxError(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se)
}

// maxDepth bounds nesting, so a hostile body cannot exhaust the stack.
const maxDepth = 512

// scanner walks b[:n]. When it needs a byte past n it reads more from r into
// b, so scanning overlaps the body's arrival instead of following it.
type scanner struct {
	b       []byte
	i, n    int
	r       io.Reader
	readErr error
	// recall, when set, skips the messages a remembered body repeats (recall.go).
	recall *recallScan
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

// ws skips whitespace. Compact JSON has none, so the check for a
// non-space byte is inlined and the loop is not.
func (s *scanner) ws() {
	if s.i < s.n && s.b[s.i] > ' ' {
		return
	}
	s.wsLoop()
}

func (s *scanner) wsLoop() {
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
// scanner positioned at the member's value; member must consume the value. A
// nil member skips the values (at depth+1), without a call through a closure.
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
		var err error
		if member == nil {
			err = s.value(depth + 1)
		} else {
			err = member(key)
		}
		if err != nil {
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
	return s.arrayEach(depth, func() error { return s.value(depth + 1) })
}

// arrayEach scans an array starting at '[', calling element with the scanner
// positioned at each element; element must consume it.
func (s *scanner) arrayEach(depth int, element func() error) error {
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
		if err := element(); err != nil {
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
		return s.object(depth, nil)
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

// skipString moves past a string starting at '"'. The common case, the whole
// string in b[:n], is inlined into the callers.
func (s *scanner) skipString() error {
	if end := scanString(s.b[:s.n], s.i+1, s.i+1); end >= 0 {
		s.i = end + 1
		return nil
	}
	return s.skipArrivingString()
}

// skipArrivingString finishes skipString when the closing quote is not in
// b[:n]: it may not have arrived yet. scanString is stateless (it rereads the
// bytes before its starting point), so it just resumes at the old end after
// each fill.
func (s *scanner) skipArrivingString() error {
	start := s.i + 1
	for {
		i := s.n
		if !s.fill() {
			s.i = s.n
			return s.fail("unterminated string")
		}
		if end := scanString(s.b[:s.n], start, i); end >= 0 {
			s.i = end + 1
			return nil
		}
	}
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
