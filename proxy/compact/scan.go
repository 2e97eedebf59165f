package compact

import (
	"longhaul/proxy/anthropic"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// A small JSON scanner over raw bytes. The compaction engine reads a request
// as spans of the client's bytes instead of decoding it: decoding an 800 KB
// request into structs costs tens of milliseconds, slicing it costs tens of
// microseconds, and untouched spans are re-emitted exactly as they came.
//
// The proxy validated the body before compaction sees it, so the scanner checks
// structure only as far as it needs to find the end of each value.

var errSyntax = errors.New("compact: malformed JSON")

func syntaxErr(what string, at int) error {
	return fmt.Errorf("%w: %s at byte %d", errSyntax, what, at)
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	// The peek's word-at-a-time scan: code in tool results is dense in
	// escaped quotes, where stopping at every quote would dominate.
	end := anthropic.StringEnd(b, i+1)
	if end < 0 {
		return 0, syntaxErr("unterminated string", i)
	}
	return end + 1, nil
}

// skipValue returns the index just past the value that starts at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, syntaxErr("unexpected end", i)
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, syntaxErr("unterminated container", i)
	default:
		j := i
		for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		if j == i {
			return 0, syntaxErr("expected a value", i)
		}
		return j, nil
	}
}

// walkObject walks the object starting at b[i]. For each member it calls fn
// with the raw key (quotes included) and the start of the value; fn returns
// the end of the value, either by skipping it or by descending into it, so
// each byte is scanned once. walkObject returns the end of the object.
func walkObject(b []byte, i int, fn func(key []byte, vi int) (int, error)) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, syntaxErr("expected an object", i)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, syntaxErr("expected a key", i)
		}
		ke, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i:ke]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, syntaxErr("expected ':'", i)
		}
		ve, err := fn(key, skipWS(b, i+1))
		if err != nil {
			return 0, err
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return 0, syntaxErr("unterminated object", i)
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, syntaxErr("expected ',' or '}'", i)
		}
	}
}

// walkArray is walkObject for arrays: fn gets each element's start.
func walkArray(b []byte, i int, fn func(vi int) (int, error)) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '[' {
		return 0, syntaxErr("expected an array", i)
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
			return 0, syntaxErr("unterminated array", i)
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return 0, syntaxErr("expected ',' or ']'", i)
		}
	}
}

// eachMember calls fn with the raw key and raw value of every member of obj.
func eachMember(obj []byte, fn func(key, val []byte) error) error {
	_, err := walkObject(obj, 0, func(k []byte, vi int) (int, error) {
		ve, err := skipValue(obj, vi)
		if err != nil {
			return 0, err
		}
		return ve, fn(k, obj[vi:ve])
	})
	return err
}

// eachElem calls fn with the raw bytes of every element of arr.
func eachElem(arr []byte, fn func(val []byte) error) error {
	_, err := walkArray(arr, 0, func(vi int) (int, error) {
		ve, err := skipValue(arr, vi)
		if err != nil {
			return 0, err
		}
		return ve, fn(arr[vi:ve])
	})
	return err
}

// keyIs compares a raw key (with quotes) to a plain name without allocating.
func keyIs(raw []byte, name string) bool {
	return len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name
}

// unquote decodes a raw JSON string; anything else gives "".
func unquote(raw []byte) string {
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

// quote encodes s as a JSON string the way the API's own clients write it:
// only '"', '\\' and control characters are escaped ("<", ">", "&" and
// U+2028 stay as they are), each in its shortest form. A string the engine
// rewrites is therefore never longer than any encoding of the same text the
// client sent, and shortening a text never lengthens the request. Invalid
// UTF-8 becomes U+FFFD, as with encoding/json.
func quote(s string) []byte {
	const hex = "0123456789abcdef"
	buf := make([]byte, 0, len(s)+2)
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			buf = append(buf, s[start:i]...)
			buf = append(buf, "\ufffd"...)
			i++
			start = i
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
		i++
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// memberValue returns the raw value of obj's member name, nil when absent.
func memberValue(obj []byte, name string) []byte {
	var val []byte
	if eachMember(obj, func(k, v []byte) error {
		if keyIs(k, name) {
			val = v
		}
		return nil
	}) != nil {
		return nil
	}
	return val
}

type member struct{ key, val []byte }

// members splits an object into its members, in order.
func members(obj []byte) ([]member, error) {
	var out []member
	err := eachMember(obj, func(k, v []byte) error {
		out = append(out, member{k, v})
		return nil
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
		ms = append(ms, member{quote(name), val})
	}
	var buf bytes.Buffer
	buf.Grow(len(obj) + len(val))
	writeObject(&buf, ms)
	return buf.Bytes(), nil
}
