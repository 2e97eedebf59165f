package anthropic

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// Helpers over complete byte slices, for readers and rewriters of a body the
// peek already validated: they find where values end with the scanner (and
// its string scan), and keep every value they do not rewrite as raw bytes.

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '"' { // most values are strings
		if end := stringEnd(b, i+1); end >= 0 {
			return end + 1, nil
		}
	}
	s := scanner{b: b, i: i, n: len(b)}
	if err := s.value(0); err != nil {
		return 0, err
	}
	return s.i, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// walkObject walks the object at b[i] (after any whitespace). For each member
// it calls fn with the raw key (quotes included) and the start of the value;
// fn returns the end of the value, either by skipping it or by descending
// into it, so each byte is scanned once. walkObject returns the end of the
// object. It is the scanner's object loop over a complete slice, without the
// streaming reads and the closure per member: a request's parse walks
// thousands of small blocks, and going through the scanner cost it 8%.
func walkObject(b []byte, i int, fn func(key []byte, vi int) (int, error)) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, syntaxError(i, "expected an object")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, syntaxError(i, "expected a string key")
		}
		ke := stringEnd(b, i+1)
		if ke < 0 {
			return 0, syntaxError(len(b), "unterminated string")
		}
		key := b[i : ke+1]
		i = skipWS(b, ke+1)
		if i >= len(b) || b[i] != ':' {
			return 0, syntaxError(i, "expected ':' after object key")
		}
		ve, err := fn(key, skipWS(b, i+1))
		if err != nil {
			return 0, err
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return 0, syntaxError(i, "unexpected end of JSON in object")
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxError(i, "expected ',' or '}' in object")
		}
	}
}

// walkArray is walkObject for arrays: fn gets each element's start.
func walkArray(b []byte, i int, fn func(vi int) (int, error)) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '[' {
		return 0, syntaxError(i, "expected an array")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := fn(i)
		if err != nil {
			return 0, err
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return 0, syntaxError(i, "unexpected end of JSON in array")
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxError(i, "expected ',' or ']' in array")
		}
	}
}

func syntaxError(at int, msg string) error { return &SyntaxError{Offset: at, Msg: msg} }

// EachMember calls fn with the key (as written between its quotes) and the
// raw value of every member of the object obj, in order; it stops at fn's
// first error and returns it, or a *SyntaxError.
func EachMember(obj []byte, fn func(key, val []byte) error) error {
	_, err := walkObject(obj, 0, func(k []byte, vi int) (int, error) {
		ve, err := skipValue(obj, vi)
		if err != nil {
			return 0, err
		}
		return ve, fn(k[1:len(k)-1], obj[vi:ve])
	})
	return err
}

// WalkObject, WalkArray and SkipValue expose the scanner's walk for readers
// of other wire formats (proxy/gemini) that must read a large body in one
// pass: fn gets each member's key (quotes included) or each element's start
// offset, and returns the end of the value, either by SkipValue or by
// descending into it, so each byte is scanned once. Each returns the end of
// what it walked.
func WalkObject(b []byte, i int, fn func(key []byte, vi int) (int, error)) (int, error) {
	return walkObject(b, i, fn)
}

// WalkArray: see WalkObject.
func WalkArray(b []byte, i int, fn func(vi int) (int, error)) (int, error) {
	return walkArray(b, i, fn)
}

// SkipValue returns the index just past the value that starts at b[i].
func SkipValue(b []byte, i int) (int, error) { return skipValue(b, i) }

// EachElement calls fn with the raw value of every element of the array arr,
// in order; it stops at fn's first error and returns it, or a *SyntaxError.
func EachElement(arr []byte, fn func(val []byte) error) error {
	_, err := walkArray(arr, 0, func(vi int) (int, error) {
		ve, err := skipValue(arr, vi)
		if err != nil {
			return 0, err
		}
		return ve, fn(arr[vi:ve])
	})
	return err
}

// MemberValue returns the raw value of obj's member name (the last one when
// the key repeats, as decoders keep it), nil when absent or obj is malformed.
func MemberValue(obj []byte, name string) []byte {
	var val []byte
	if EachMember(obj, func(k, v []byte) error {
		if string(k) == name {
			val = v
		}
		return nil
	}) != nil {
		return nil
	}
	return val
}

// keyIs compares a raw key (with quotes) to a plain name without allocating.
func keyIs(raw []byte, name string) bool {
	return len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name
}

// member is an object member as raw bytes: the key with its quotes.
type member struct{ key, val []byte }

// members splits an object into its members, in order.
func members(obj []byte) ([]member, error) {
	var out []member
	_, err := walkObject(obj, 0, func(k []byte, vi int) (int, error) {
		ve, err := skipValue(obj, vi)
		if err != nil {
			return 0, err
		}
		out = append(out, member{k, obj[vi:ve]})
		return ve, nil
	})
	return out, err
}

// writeObject emits members as a compact object.
func writeObject(buf *bytes.Buffer, ms []member) {
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(m.key)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
}

// setMember returns obj with member name set to val (appended when absent),
// keeping every other member's bytes and the original order.
func setMember(obj []byte, name string, val []byte) ([]byte, error) {
	ms, err := members(obj)
	if err != nil {
		return nil, err
	}
	found := false
	for i := range ms {
		if keyIs(ms[i].key, name) {
			ms[i].val, found = val, true
		}
	}
	if !found {
		ms = append(ms, member{Quote(name), val})
	}
	var buf bytes.Buffer
	buf.Grow(len(obj) + len(val))
	writeObject(&buf, ms)
	return buf.Bytes(), nil
}

// Unquote decodes a raw JSON string; anything else gives "".
func Unquote(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in)
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// Quote encodes s as a JSON string the way the API's own clients write it:
// only '"', '\\' and control characters are escaped ("<", ">", "&" and
// U+2028 stay as they are), each in its shortest form. A string a rewrite
// produces is therefore never longer than any encoding of the same text the
// client sent, and shortening a text never lengthens the request. Invalid
// UTF-8 becomes U+FFFD, as with encoding/json.
func Quote(s string) []byte {
	return AppendQuote(make([]byte, 0, len(s)+2), unsafe.Slice(unsafe.StringData(s), len(s)))
}

// AppendQuote appends s to dst as Quote writes it; s is only read.
func AppendQuote(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Hex4 reads the four hex digits of a \uXXXX escape at the start of h.
func Hex4(h []byte) (rune, bool) {
	if len(h) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range h[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// MemberSpan is where the value of the top-level member name lies in obj (a JSON object),
// so it can be replaced in place (WithModel); ok is false when obj has no such member.
func MemberSpan(obj []byte, name string) (span Span, ok bool) {
	v := MemberValue(obj, name)
	if v == nil {
		return Span{}, false
	}
	// v is a sub-slice of obj: its capacity runs to obj's end, which gives its offset.
	start := cap(obj) - cap(v)
	if start < 0 || start+len(v) > len(obj) {
		return Span{}, false
	}
	return Span{Start: start, End: start + len(v)}, true
}
