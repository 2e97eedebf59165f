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
	// Where things are in the body, so the proxy can splice (a mapped model)
	// or hash (a session without user id) without decoding the rest.
	ModelSpan, SystemSpan, FirstMessageSpan Span
	// ThinkingSpan is the top-level thinking config.
	ThinkingSpan Span
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

// SyntaxError reports malformed JSON with the byte offset of the problem.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

const maxDepth = 512

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
			if s.more() && s.b[s.i] == '[' {
				var ms msgScan
				err := s.arrayEach(1, func() error {
					start := s.i
					err := s.message(2, &ms)
					if ms.stats.Count == 0 {
						p.FirstMessageSpan = Span{start, s.i}
					}
					ms.next(Span{start, s.i})
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

// Strings are skipped eight bytes at a time (SWAR: a uint64 holds b[i:i+8],
// byte j in bits 8j..8j+7). Code in tool results is dense in quotes, nearly
// all of them escaped (a \" every ~17 bytes), so stopping at each quote to
// count the backslashes before it would dominate. Instead each word yields a
// mask of candidates, the quotes that may close the string. A quote is
// escaped for sure when the byte before it is a backslash and the byte before
// that is not (a run of exactly one backslash): those never leave the loop.
// The other quotes, those after a non-backslash (always unescaped) and the
// rare ones after two or more backslashes, are checked exactly by counting
// the run (evenBackslashes). The bytes before b[i:i+8] come from loads one and
// two bytes earlier rather than from shifts with a carry across words, so the
// scan needs no state but the position.

const (
	lows7   = 0x7f7f7f7f7f7f7f7f
	highs   = 0x8080808080808080
	quotes  = 0x2222222222222222
	slashes = 0x5c5c5c5c5c5c5c5c
	allOnes = ^uint64(0)
)

// How scanString alternates between IndexByte and the masks: after a probe
// that skipped at least sparseGap bytes, the masks cover sparseSpan bytes (one
// block) before the next probe; after a shorter one, denseSpan bytes. (On
// text with a quote every g bytes, probing wins from g ≈ 80 on; the masks win
// by far on code, with a quote every ~17 bytes.)
const sparseGap, sparseSpan, denseSpan = 64, 32, 16 << 10

// swar holds the mask constants in a variable so that the loops load them
// into registers once instead of rematerializing them (a 10-byte MOV each).
var swar = [...]uint64{lows7, highs, quotes, slashes, ^uint64(slashes)}

// nonCandidates returns, in the high bit of each byte, which bytes of x cannot
// close the string: x holds b[i:i+8], z b[i-1:i+7] and w b[i-2:i+6]; m7, hi,
// qs, bs and nbs are lows7, highs, quotes, slashes and ^slashes. A byte's high
// bit is clear iff x's byte is '"' and z's is not '\\' or w's is '\\' (or, w
// being used loosely, a byte >= 0x80 whose low seven bits are those of '\\').
// Each part is exact per byte, with no carry or borrow into the next byte:
//
//   - ((x&m7)^qs)+m7 sets a byte's high bit iff its low seven bits differ from
//     those of '"' (at most 0x7f+0x7f = 0xfe, no carry); or-ing in x adds the
//     bytes >= 0x80. High bits: the bytes of x that are not '"'.
//   - For u = z^nbs (a byte is 0xff iff z's is '\\'), (u|hi)-m7 is
//     (u&0x7f)+1 per byte (from 0x80..0xff minus 0x7f, no borrow), whose high
//     bit is set iff u's low seven bits are all ones; and-ing with u drops
//     the bytes of z >= 0x80. High bits: the backslashes of z.
//   - ((w&m7)^bs)+m7 as for quotes: the bytes of w whose low seven bits
//     differ from '\\'. Leaving out "| w" lets a byte >= 0x80 pass for a
//     backslash, which only adds candidates, never hides one.
func nonCandidates(x, z, w, m7, hi, qs, bs, nbs uint64) uint64 {
	u := z ^ nbs
	return ((x&m7 ^ qs) + m7) | x | ((w&m7^bs)+m7)&((u|hi)-m7)&u
}

// scanString returns the index of the quote closing a string whose contents
// begin at b[start] (b[start-1] is its opening quote), looking at b[i:] (the
// caller knows that b[start:i] holds no closing quote), or -1 if b[i:] holds
// none. It is stateless: to resume where a previous call stopped, pass that
// call's len(b) as i.
func scanString(b []byte, start, i int) int {
	// The masks need b[i-2] and b[i-1]: a string opening at b[0] starts
	// bytewise. At i == start they hold the opening quote, which is not a
	// backslash, and the byte before it, which then does not matter.
	for ; i < 2 && i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	m7, hi, qs, bs, nbs := swar[0], swar[1], swar[2], swar[3], swar[4]
	// Words go one by one up to lim, then (from stop on, after a new probe)
	// through quietBlocks. Most strings are short and end within the first
	// 32 bytes, which go word by word.
	lim, stop := i+32, 0
	for i <= len(b)-8 {
		if i >= lim {
			if i >= stop {
				// IndexByte's vector loop is faster than the masks across
				// runs without quotes (prose, base64 data). It stops at
				// the next quote, escaped or not, and the masks resume
				// there. Where quotes are sparse the masks only cover the
				// next block before probing again; where they are dense,
				// a long stretch.
				k := bytes.IndexByte(b[i:], '"')
				if k < 0 {
					i = len(b)
					break
				}
				i += k
				stop = i + sparseSpan
				if k < sparseGap {
					stop = i + denseSpan
				}
			}
			i = quietBlocks(b[:min(stop, len(b))], i)
			// Then word by word through a block with a candidate, or what
			// is left up to stop.
			lim = min(i+32, stop)
			continue
		}
		p := b[i-2 : i+8]
		x := binary.LittleEndian.Uint64(p[2:])
		z := binary.LittleEndian.Uint64(p[1:])
		w := binary.LittleEndian.Uint64(p)
		t := nonCandidates(x, z, w, m7, hi, qs, bs, nbs)
		for c := ^(t | m7); c != 0; c &= c - 1 {
			k := i + bits.TrailingZeros64(c)>>3
			if evenBackslashes(b, start, k) {
				return k
			}
		}
		i += 8
	}
	for ; i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	return -1
}

// quietBlocks skips the 32-byte blocks of b[i:] (i >= 2) that hold no
// candidate and returns the start of the first block that holds one, or of
// the last, shorter block.
func quietBlocks(b []byte, i int) int {
	m7, hi, qs, bs, nbs := swar[0], swar[1], swar[2], swar[3], swar[4]
	le := binary.LittleEndian
	p := b[i-2:]
	for len(p) >= 34 {
		t := nonCandidates(le.Uint64(p[2:]), le.Uint64(p[1:]), le.Uint64(p), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[10:]), le.Uint64(p[9:]), le.Uint64(p[8:]), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[18:]), le.Uint64(p[17:]), le.Uint64(p[16:]), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[26:]), le.Uint64(p[25:]), le.Uint64(p[24:]), m7, hi, qs, bs, nbs)
		if t|m7 != allOnes {
			break
		}
		p = p[32:]
	}
	return len(b) - len(p) + 2
}

// StringEnd returns the index of the quote that closes the JSON string
// whose opening quote is b[start-1], or -1 if b holds none. It is the peek's
// SWAR scan, for other raw-byte readers of requests (the compaction engine).
func StringEnd(b []byte, start int) int { return scanString(b, start, start) }

// evenBackslashes reports whether the run of backslashes ending just before
// b[k] (and starting no earlier than b[start]) has even length, i.e. whether a
// quote at b[k] is unescaped.
func evenBackslashes(b []byte, start, k int) bool {
	j := k
	for j > start && b[j-1] == '\\' {
		j--
	}
	return (k-j)%2 == 0
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
