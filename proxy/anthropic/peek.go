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

// skipString moves past a string starting at '"'. While the body is still
// arriving, the closing quote may lie past s.n; scanString is stateless (it
// rereads the bytes before its starting point), so it just resumes at the old
// end after fill.
func (s *scanner) skipString() error {
	start := s.i + 1
	i := start
	for {
		if end := scanString(s.b[:s.n], start, i); end >= 0 {
			s.i = end + 1
			return nil
		}
		// No closing quote in b[start:n]; it may not have arrived yet.
		i = s.n
		if !s.fill() {
			s.i = s.n
			return s.fail("unterminated string")
		}
	}
}

const (
	lows7   = 0x7f7f7f7f7f7f7f7f
	highs   = 0x8080808080808080
	quotes  = 0x2222222222222222
	slashes = 0x5c5c5c5c5c5c5c5c
	allOnes = ^uint64(0)
)

// swarConsts holds the constants of the masks in a variable: loaded once into
// registers, they are not rematerialized (a 10-byte MOV each) in the loops.
type swarConsts struct{ lows7, highs, quotes, slashes, notSlashes uint64 }

var swar = swarConsts{lows7, highs, quotes, slashes, ^uint64(slashes)}

// nonCandidates returns a mask, in the high bit of each byte, of the bytes of
// x that cannot close the string: x holds b[i:i+8], z b[i-1:i+7] and w
// b[i-2:i+6]. The high bit is clear exactly for a quote in x that is not
// preceded by a backslash, or is preceded by a backslash that is itself
// preceded by a backslash (and maybe for a quote after a backslash after a
// byte of w with the high bit set); every other quote is escaped. The masks
// are exact byte by byte, with no carries between bytes:
//
//   - ((x&0x7f…)^0x22…)+0x7f… sets a byte's high bit iff its low seven bits
//     differ from those of '"'; or-ing in x adds the bytes >= 0x80: so the
//     result's high bits mark the bytes that are not '"'.
//   - For u = z^^0x5c…, ((u|0x80…)-0x7f…) sets a byte's high bit iff u's low
//     seven bits are all ones, i.e. z's match '\'; and-ing with u keeps the
//     bytes < 0x80: the high bits mark the backslashes of z.
//   - ((w&0x7f…)^0x5c…)+0x7f… marks the bytes of w whose low seven bits differ
//     from '\'; leaving out "| w" only lets a byte >= 0x80 pass for a
//     backslash, which makes more candidates, never fewer.
func nonCandidates(x, z, w uint64, k *swarConsts) uint64 {
	u := z ^ k.notSlashes
	return ((x&k.lows7 ^ k.quotes) + k.lows7) | x |
		((w&k.lows7^k.slashes)+k.lows7)&((u|k.highs)-k.lows7)&u
}

// scanString returns the index of the quote closing a string whose contents
// begin at b[start] (b[start-1] is the opening quote), looking at b[i:] (the
// caller knows b[start:i] holds no closing quote), or -1 if b[i:] holds none.
//
// It reads eight bytes at a time and computes exact per-byte masks, in the
// high bit of each byte, of quotes and of backslashes in the byte before and
// the byte two before. A quote is certainly escaped when the byte before it is
// a backslash and the byte before that is not (a backslash run of length one);
// such quotes, the bulk of the quotes in code, never leave the fast loop. The
// other quotes are candidates, checked exactly by counting backslashes.
func scanString(b []byte, start, i int) int {
	// The masks read b[i-2:i+8]; a string opening at b[0] starts bytewise.
	for ; i < 2 && i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	m7, qs, bss := swar[0], swar[1], swar[2]
	probed := false
	for n := 0; i <= len(b)-8; i += 8 {
		// Most strings are short and end within four words. Past that, the
		// string is long: skip the blocks without candidates.
		if n == 4 {
			if !probed {
				// Long runs without quotes (prose, base64) go faster with
				// the vector loop of IndexByte; it stops at the next quote,
				// escaped or not, and the masks take over from there.
				probed = true
				if k := bytes.IndexByte(b[i:], '"'); k < 0 {
					i = len(b)
					break
				} else {
					i += k
				}
			}
			i = quietBlocks(b, i)
			n = 0
			if i > len(b)-8 {
				break
			}
		}
		n++
		p := b[i-2 : i+8]
		x := binary.LittleEndian.Uint64(p[2:])
		z := binary.LittleEndian.Uint64(p[1:])
		w := binary.LittleEndian.Uint64(p)
		t := ((x&m7 ^ qs) + m7) | x | ((w&m7^bss)+m7)&^(((z&m7^bss)+m7)|z)
		for c := ^(t | m7); c != 0; c &= c - 1 {
			k := i + bits.TrailingZeros64(c)>>3
			if evenBackslashes(b, start, k) {
				return k
			}
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	return -1
}

// The masks below hold one bit per byte, the high bit, and are exact: for a
// byte c, (c&0x7f)+0x7f has its high bit set iff c&0x7f != 0, never carries
// into the next byte, and or-ing in c covers bytes with the high bit set. So
//
//	nonQuote(x) = ((x&0x7f…) ^ 0x22…) + 0x7f… | x   high bit: byte is not '"'
//	nonSlash(x) = ((x&0x7f…) ^ 0x5c…) + 0x7f… | x   high bit: byte is not '\'
//
// For the eight bytes at i, loaded as x, with z and w the words loaded one and
// two bytes earlier, a quote at byte j is escaped for sure (esc) when z's byte
// j is a backslash and w's byte j is not; anything else that is a quote is a
// candidate. A byte of w with the high bit set may count as a backslash (its
// "| w" is left out): that only makes more candidates, which is safe.

// quietBlocks skips 32-byte blocks of b[i:] (i >= 2) holding no candidate and
// returns the start of the first block that holds one, or of the final block
// of fewer than 32 bytes.
func quietBlocks(b []byte, i int) int {
	m7, qs, bss := swar[0], swar[1], swar[2]
	p := b[i-2:]
	for len(p) >= 34 {
		x := binary.LittleEndian.Uint64(p[2:])
		z := binary.LittleEndian.Uint64(p[1:])
		w := binary.LittleEndian.Uint64(p)
		t := ((x&m7 ^ qs) + m7) | x | ((w&m7^bss)+m7)&^(((z&m7^bss)+m7)|z)
		x = binary.LittleEndian.Uint64(p[10:])
		z = binary.LittleEndian.Uint64(p[9:])
		w = binary.LittleEndian.Uint64(p[8:])
		t &= ((x&m7 ^ qs) + m7) | x | ((w&m7^bss)+m7)&^(((z&m7^bss)+m7)|z)
		x = binary.LittleEndian.Uint64(p[18:])
		z = binary.LittleEndian.Uint64(p[17:])
		w = binary.LittleEndian.Uint64(p[16:])
		t &= ((x&m7 ^ qs) + m7) | x | ((w&m7^bss)+m7)&^(((z&m7^bss)+m7)|z)
		x = binary.LittleEndian.Uint64(p[26:])
		z = binary.LittleEndian.Uint64(p[25:])
		w = binary.LittleEndian.Uint64(p[24:])
		t &= ((x&m7 ^ qs) + m7) | x | ((w&m7^bss)+m7)&^(((z&m7^bss)+m7)|z)
		if t|m7 != allOnes {
			break
		}
		p = p[32:]
	}
	return len(b) - len(p) + 2
}

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
