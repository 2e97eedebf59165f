package openai

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/http"
	"strings"

	"longhaul/proxy/anthropic"
)

// The Responses translation reads requests with proxy/anthropic's scanner
// (EachMember, ParseBlocks) rather than encoding/json: it never decodes the
// text of a conversation, it copies each JSON string as it came, so an
// 800 KB conversation translates in about a millisecond (BenchmarkResponses*).

// ResponsesRequestError is a request the translation refuses: the HTTP status,
// OpenAI's error code and the offending param, so the proxy answers it in the
// client's own shape (JSON renders it with ErrorJSON).
type ResponsesRequestError struct {
	Status  int
	Code    string // "" for none
	Param   string // "" for none
	Message string
}

func (e *ResponsesRequestError) Error() string {
	if e.Param != "" {
		return e.Param + ": " + e.Message
	}
	return e.Message
}

// JSON is the error in OpenAI's shape.
func (e *ResponsesRequestError) JSON() []byte { return ErrorJSON(e.Status, e.Code, e.Param, e.Message) }

// AnthropicJSON is the error in Anthropic's shape, for a Messages client whose
// request could not be put into the Responses shape.
func (e *ResponsesRequestError) AnthropicJSON() []byte {
	return anthropic.ErrorJSON(anthropic.ErrorType(e.Status), e.Error())
}

func responsesBadRequest(param, format string, args ...any) *ResponsesRequestError {
	return &ResponsesRequestError{Status: http.StatusBadRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

func responsesSyntaxError(err error) *ResponsesRequestError {
	return &ResponsesRequestError{Status: http.StatusBadRequest, Message: "We could not parse the JSON body of your request: " + err.Error()}
}

// responsesFields holds the raw values of the members an item, a content part
// or a tool may have: nil when absent. One struct for all of them keeps the
// scan to a single switch.
type responsesFields struct {
	Type, Role, Content, ID, CallID, Name, Arguments, Output           []byte
	Summary, EncryptedContent, Text, Refusal, ImageURL, FileID         []byte
	FileData, FileURL, Filename, Description, Parameters, Format       []byte
	Schema, Effort, Strict, Status, Data, MediaType, URL, Source, Kind []byte
}

func parseResponsesFields(obj []byte) (responsesFields, error) {
	var f responsesFields
	if len(obj) == 0 || obj[0] != '{' {
		return f, fmt.Errorf("expected an object")
	}
	_, err := f.walk(obj)
	return f, err
}

// walk fills f from the object at the start of obj and returns its end.
func (f *responsesFields) walk(obj []byte) (int, error) {
	return anthropic.WalkObject(obj, 0, func(k []byte, vi int) (int, error) {
		ve, err := anthropic.SkipValue(obj, vi)
		if err != nil {
			return 0, err
		}
		f.set(k[1:len(k)-1], obj[vi:ve])
		return ve, nil
	})
}

func (f *responsesFields) set(k, v []byte) {
	switch string(k) {
	case "type":
		f.Type = v
	case "role":
		f.Role = v
	case "content":
		f.Content = v
	case "id":
		f.ID = v
	case "call_id":
		f.CallID = v
	case "name":
		f.Name = v
	case "arguments":
		f.Arguments = v
	case "output":
		f.Output = v
	case "summary":
		f.Summary = v
	case "encrypted_content":
		f.EncryptedContent = v
	case "text":
		f.Text = v
	case "refusal":
		f.Refusal = v
	case "image_url":
		f.ImageURL = v
	case "file_id":
		f.FileID = v
	case "file_data":
		f.FileData = v
	case "file_url":
		f.FileURL = v
	case "filename":
		f.Filename = v
	case "description":
		f.Description = v
	case "parameters":
		f.Parameters = v
	case "format":
		f.Format = v
	case "schema":
		f.Schema = v
	case "effort":
		f.Effort = v
	case "strict":
		f.Strict = v
	case "status":
		f.Status = v
	case "data":
		f.Data = v
	case "media_type":
		f.MediaType = v
	case "url":
		f.URL = v
	case "source":
		f.Source = v
	case "kind":
		f.Kind = v
	}
}

// responsesElem is an element of an array of objects: its raw bytes and the
// members the translation reads.
type responsesElem struct {
	raw []byte
	f   responsesFields
}

// responsesElements reads a JSON array of objects (responsesEachElement).
func responsesElements(arr []byte) ([]responsesElem, error) {
	var out []responsesElem
	err := responsesEachElement(arr, func(_ int, e *responsesElem) error {
		out = append(out, *e)
		return nil
	})
	return out, err
}

// responsesEachElement reads a JSON array of objects in one pass, calling fn
// with each element (responsesArray). A syntax error is a plain error; fn's
// errors are returned as they are.
func responsesEachElement(arr []byte, fn func(i int, e *responsesElem) error) error {
	a := newResponsesArray(arr)
	for a.next() {
		if err := fn(a.n, &a.e); err != nil {
			return err
		}
	}
	return a.err
}

func skipResponsesWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// isJSONString reports whether raw is a JSON string (not null, not absent).
func isJSONString(raw []byte) bool { return len(raw) >= 2 && raw[0] == '"' }

// isJSONNull reports whether raw is absent or null.
func isJSONNull(raw []byte) bool { return len(raw) == 0 || string(raw) == "null" }

// responsesWriter builds a JSON object member by member.
type responsesWriter struct {
	buf   *bytes.Buffer
	first bool
}

func newResponsesWriter(buf *bytes.Buffer) responsesWriter {
	buf.WriteByte('{')
	return responsesWriter{buf: buf, first: true}
}

func (w *responsesWriter) key(k string) {
	if !w.first {
		w.buf.WriteByte(',')
	}
	w.first = false
	w.buf.WriteByte('"')
	w.buf.WriteString(k)
	w.buf.WriteString(`":`)
}

// raw writes a member whose value is already JSON.
func (w *responsesWriter) raw(k string, v []byte) {
	w.key(k)
	w.buf.Write(v)
}

// str writes a member whose value is the string s.
func (w *responsesWriter) str(k, s string) {
	w.key(k)
	w.buf.Write(anthropic.Quote(s))
}

func (w *responsesWriter) int(k string, n int) {
	w.key(k)
	fmt.Fprintf(w.buf, "%d", n)
}

func (w *responsesWriter) end() { w.buf.WriteByte('}') }

// compactJSON returns raw without insignificant whitespace (tool arguments are
// sent compact, as the APIs themselves send them).
func compactJSON(raw []byte) []byte {
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return raw
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// splitDataURL splits "data:<media type>;base64,<data>".
func splitDataURL(u string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mediaType, found = strings.CutSuffix(meta, ";base64")
	if !found || mediaType == "" {
		return "", "", false
	}
	return mediaType, data, true
}

// isEmptyJSONString reports whether raw is the JSON string "" (checked on the
// raw bytes: decoding a long text only to test it for emptiness is wasted work).
func isEmptyJSONString(raw []byte) bool { return len(raw) == 2 && raw[0] == '"' }

// responsesCheckStrings validates what the scanner skips inside strings:
// escapes and control characters. The translation copies strings as they
// came, so a malformed one would otherwise reach the output. Eight bytes are
// read at a time into a mask of the quotes, backslashes and control bytes
// among them, exact per byte (no borrow crosses bytes), and every candidate
// of a word is handled from its mask: escaped quotes are as dense as one in
// seventeen bytes in code, and going back to the word loop at each cost a
// third of the time (BenchmarkResponsesRequestToAnthropic800KB).
func responsesCheckStrings(b []byte) error {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	const ones = 0x0101010101010101
	inString := false
	next := 0 // the first byte not yet consumed by an escape
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// High bit of a byte set where it is not '"', not '\\', not below
		// 0x20: each sum stays within its byte (at most 0x7f+0x7f).
		low := x & lows
		notQuote := (low ^ ones*'"') + lows
		notSlash := (low ^ ones*'\\') + lows
		notCtl := low + ones*(0x80-0x20)
		m := ^((notQuote & notSlash & notCtl) | x) & highs
		for ; m != 0; m &= m - 1 {
			k := i + bits.TrailingZeros64(m)>>3
			if k < next {
				continue
			}
			if b[k] == '"' { // the most frequent, kept inline
				inString = !inString
				continue
			}
			if err := responsesCheckByte(b, k, &inString, &next); err != nil {
				return err
			}
		}
	}
	for k := max(i, next); k < len(b); k = max(k+1, next) {
		if c := b[k]; c == '"' || c == '\\' || c < 0x20 {
			if err := responsesCheckByte(b, k, &inString, &next); err != nil {
				return err
			}
		}
	}
	return nil
}

// responsesCheckByte handles a quote, backslash or control byte at b[k]:
// it toggles inString at a quote and moves next past a valid escape.
func responsesCheckByte(b []byte, k int, inString *bool, next *int) error {
	switch c := b[k]; {
	case c == '"':
		*inString = !*inString
	case !*inString:
		// Outside strings the scanner judges a stray byte.
	case c == '\\':
		if k+1 >= len(b) {
			return fmt.Errorf("unterminated escape at byte %d", k)
		}
		switch b[k+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			*next = k + 2
		case 'u':
			if k+6 > len(b) || !isHex4(b[k+2:k+6]) {
				return fmt.Errorf("invalid \\u escape at byte %d", k)
			}
			*next = k + 6
		default:
			return fmt.Errorf("invalid escape at byte %d", k)
		}
	default:
		return fmt.Errorf("control character in a string at byte %d", k)
	}
	return nil
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// responsesName returns a short JSON string such as a type, role or call id:
// without an allocation when it has no escapes (a type name never has), so
// the per-item switches of an 800 KB conversation cost no garbage. Callers
// compare it or convert it where it is kept.
func responsesName(raw []byte) []byte {
	if !isJSONString(raw) {
		return nil
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return in
	}
	return []byte(anthropic.Unquote(raw))
}
