package gemini

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"

	"longhaul/proxy/anthropic"
)

// A request's contents are read as spans of the client's bytes with
// proxy/anthropic's scanner: string values (text, base64 data, function
// arguments and results) stay raw JSON, quotes and escapes included, and go
// into the translated body as they are. Both protocols write strings the
// same way, so nothing is decoded and re-encoded; that is what keeps an
// 800 KB conversation well inside its budget (bench_test.go).

// rawContent is one element of contents.
type rawContent struct {
	role  string
	parts []rawPart
}

// rawPart is one part; exactly one of its data fields is set.
type rawPart struct {
	text      []byte // raw JSON string; nil when absent
	thought   bool
	signature string
	call      *rawCall // functionCall: args in data
	response  *rawCall // functionResponse: response in data
	media     *rawMedia
	code      []byte // executableCode or codeExecutionResult, raw
}

type rawCall struct {
	id, name string
	data     []byte // raw JSON object, nil when absent
	// single is the string of a response that is only {"output": "…"} or
	// {"error": "…"} (isError), nil otherwise.
	single  []byte
	isError bool
}

// rawMedia is inlineData (data: a raw base64 string) or fileData (uri).
type rawMedia struct {
	mime string
	data []byte
	uri  string
}

// readGemini reads a generateContent body in one pass: contents broken
// into parts, systemInstruction raw, and every other member gathered into
// small, a JSON object to decode (those are small).
func readGemini(body []byte) (contents []rawContent, system, small []byte, err error) {
	small = append(small, '{')
	end, err := anthropic.WalkObject(body, 0, func(k []byte, vi int) (int, error) {
		switch string(k) {
		case `"contents"`:
			if vi < len(body) && body[vi] == '[' {
				contents = contents[:0]
				return walkContents(body, vi, &contents)
			}
		case `"systemInstruction"`:
			ve, err := anthropic.SkipValue(body, vi)
			if err != nil {
				return 0, err
			}
			system = body[vi:ve]
			return ve, nil
		}
		ve, err := anthropic.SkipValue(body, vi)
		if err != nil {
			return 0, err
		}
		if len(small) > 1 {
			small = append(small, ',')
		}
		small = append(small, k...)
		small = append(small, ':')
		small = append(small, body[vi:ve]...)
		return ve, nil
	})
	if err == nil && len(bytes.TrimSpace(body[end:])) > 0 {
		err = fmt.Errorf("unexpected data after the top-level object")
	}
	if err == nil {
		err = checkText(body)
	}
	return contents, system, append(small, '}'), err
}

func walkContents(b []byte, i int, out *[]rawContent) (int, error) {
	return anthropic.WalkArray(b, i, func(ci int) (int, error) {
		var c rawContent
		end, err := anthropic.WalkObject(b, ci, func(k []byte, vi int) (int, error) {
			switch string(k) {
			case `"role"`:
				ve, err := anthropic.SkipValue(b, vi)
				if err != nil {
					return 0, err
				}
				c.role = anthropic.Unquote(b[vi:ve])
				return ve, nil
			case `"parts"`:
				c.parts = c.parts[:0]
				return anthropic.WalkArray(b, vi, func(pi int) (int, error) {
					p, end, err := walkPart(b, pi)
					c.parts = append(c.parts, p)
					return end, err
				})
			}
			return anthropic.SkipValue(b, vi)
		})
		*out = append(*out, c)
		return end, err
	})
}

// walkPart reads the part at b[i].
func walkPart(b []byte, i int) (rawPart, int, error) {
	var p rawPart
	end, err := anthropic.WalkObject(b, i, func(k []byte, vi int) (int, error) {
		switch string(k) {
		case `"functionCall"`:
			c, ve, err := walkCall(b, vi, `"args"`)
			p.call = c
			return ve, err
		case `"functionResponse"`:
			c, ve, err := walkCall(b, vi, `"response"`)
			p.response = c
			return ve, err
		}
		ve, err := anthropic.SkipValue(b, vi)
		if err != nil {
			return 0, err
		}
		v := b[vi:ve]
		switch string(k) {
		case `"text"`:
			if v[0] != '"' {
				return 0, fmt.Errorf("text must be a string")
			}
			p.text = v
		case `"thought"`:
			p.thought = string(v) == "true"
		case `"thoughtSignature"`:
			p.signature = anthropic.Unquote(v)
		case `"inlineData"`, `"fileData"`:
			m := &rawMedia{}
			p.media = m
			return ve, anthropic.EachMember(v, func(k, v []byte) error {
				switch string(k) {
				case "mimeType":
					m.mime = anthropic.Unquote(v)
				case "data":
					m.data = v
				case "fileUri":
					m.uri = anthropic.Unquote(v)
				}
				return nil
			})
		case `"executableCode"`, `"codeExecutionResult"`:
			p.code = v
		}
		return ve, nil
	})
	return p, end, err
}

// walkCall reads a functionCall or functionResponse at b[i]; dataKey names
// its payload (args or response). For a response it also notes whether the
// payload is the SDKs' single {"output"} or {"error"} string, so the
// payload is scanned only once.
func walkCall(b []byte, i int, dataKey string) (*rawCall, int, error) {
	c := &rawCall{}
	end, err := anthropic.WalkObject(b, i, func(k []byte, vi int) (int, error) {
		if string(k) == dataKey && vi < len(b) && b[vi] == '{' && dataKey == `"response"` {
			members := 0
			ve, err := anthropic.WalkObject(b, vi, func(k []byte, vi int) (int, error) {
				ve, err := anthropic.SkipValue(b, vi)
				if err != nil {
					return 0, err
				}
				members++
				if members == 1 && (string(k) == `"output"` || string(k) == `"error"`) && b[vi] == '"' {
					c.single, c.isError = b[vi:ve], string(k) == `"error"`
				}
				return ve, err
			})
			if err != nil {
				return 0, err
			}
			if members != 1 {
				c.single = nil
			}
			c.data = b[vi:ve]
			return ve, nil
		}
		ve, err := anthropic.SkipValue(b, vi)
		if err != nil {
			return 0, err
		}
		v := b[vi:ve]
		switch string(k) {
		case `"id"`:
			c.id = anthropic.Unquote(v)
		case `"name"`:
			c.name = anthropic.Unquote(v)
		case dataKey:
			if string(v) != "null" {
				c.data = v
			}
		}
		return ve, nil
	})
	return c, end, err
}

// joinRaw joins raw JSON strings into one (escapes are self-contained, so
// the inner bytes concatenate), with sep (raw, already escaped) between.
func joinRaw(dst []byte, parts [][]byte, sep string) []byte {
	dst = append(dst, '"')
	for i, p := range parts {
		if i > 0 {
			dst = append(dst, sep...)
		}
		dst = append(dst, p[1:len(p)-1]...)
	}
	return append(dst, '"')
}

func isRawObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// checkText finds what the scanner lets through but JSON forbids in a body
// whose structure it already walked: a control character (a raw byte below
// 0x20 inside a string, or outside one other than whitespace) or a bad
// escape. Text is copied into the translation as it came, so without this
// check invalid input could become invalid output. Inside strings it reads
// eight bytes at a time and jumps from one quote, backslash or control byte
// to the next, since a body is mostly long strings.
func checkText(b []byte) error {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
		// The bytes that may follow a backslash (other than u), as bit sets
		// over 0–63 and 64–127.
		escLo = 1<<'"' | 1<<'/'
		escHi = 1<<('\\'-64) | 1<<('b'-64) | 1<<('f'-64) | 1<<('n'-64) | 1<<('r'-64) | 1<<('t'-64)
	)
	in := false
	for i := 0; i < len(b); {
		if in {
			for i+8 <= len(b) {
				x := binary.LittleEndian.Uint64(b[i:])
				q := x ^ (ones * '"')
				s := x ^ (ones * '\\')
				// Set for a byte below 0x20, a quote or a backslash; bytes
				// >= 0x80 never set it, and the lowest hit is always a true one.
				m := ((x - ones*0x20) | (q - ones) | (s - ones)) &^ x & high
				if m == 0 {
					i += 8
					continue
				}
				i += bits.TrailingZeros64(m) >> 3
				if b[i] != '\\' || i+1 >= len(b) {
					break
				}
				if e := b[i+1]; e < 64 && escLo>>e&1 == 1 || e >= 64 && e < 128 && escHi>>(e-64)&1 == 1 {
					i += 2 // a one-letter escape: on with the next word
					continue
				}
				break
			}
			if i >= len(b) {
				break
			}
		}
		c := b[i]
		if !in {
			switch {
			case c == '"':
				in = true
			case c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r':
				return fmt.Errorf("control character at byte %d", i)
			}
			i++
			continue
		}
		switch {
		case c == '"':
			in = false
		case c < 0x20:
			return fmt.Errorf("control character in a string at byte %d", i)
		case c == '\\':
			if i+1 >= len(b) {
				return fmt.Errorf("bad escape at byte %d", i)
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+5 >= len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return fmt.Errorf("bad \\u escape at byte %d", i)
				}
				i += 5
			default:
				return fmt.Errorf("bad escape at byte %d", i)
			}
		}
		i++
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
