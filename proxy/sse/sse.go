// Package sse reads and writes Server-Sent Events without buffering the stream:
// each event is returned as soon as its terminating blank line arrives, with its
// raw bytes intact so a relay can forward exactly what the upstream sent.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrEventTooLarge is returned when a single event exceeds the reader's limit;
// it protects the proxy from an upstream that never ends an event.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one SSE event. Raw holds the bytes as received, including the blank
// line that ended it. Name and Data are parsed from Raw; an event made only of
// comments (keep-alives) has both empty.
type Event struct {
	Raw  []byte
	Name string
	Data []byte
}

// Reader splits a stream into events.
type Reader struct {
	br       *bufio.Reader
	maxEvent int
}

// DefaultMaxEvent bounds one event. Anthropic events are small, but server-tool
// results (web search, code execution) arrive in one content_block_start.
const DefaultMaxEvent = 8 << 20

// NewReader returns a Reader that rejects events larger than maxEvent bytes
// (DefaultMaxEvent if maxEvent <= 0).
func NewReader(r io.Reader, maxEvent int) *Reader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	return &Reader{br: bufio.NewReaderSize(r, 32<<10), maxEvent: maxEvent}
}

// Next returns the next event. At a clean end of stream it returns io.EOF; a
// stream that ends inside an event returns io.ErrUnexpectedEOF (with the partial
// event in Raw, so callers can still account for it).
func (r *Reader) Next() (Event, error) {
	var raw []byte
	for {
		line, err := r.br.ReadSlice('\n')
		if len(raw)+len(line) > r.maxEvent {
			return Event{}, fmt.Errorf("%w (over %d bytes)", ErrEventTooLarge, r.maxEvent)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			raw = append(raw, line...)
			continue
		}
		raw = append(raw, line...)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(bytes.TrimSpace(raw)) == 0 {
					return Event{}, io.EOF
				}
				return parse(raw), io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if isBlank(line) {
			if len(raw) == len(line) {
				// Stray blank line between events: no event, keep reading.
				raw = raw[:0]
				continue
			}
			return parse(raw), nil
		}
	}
}

func isBlank(line []byte) bool {
	return len(line) == 1 || (len(line) == 2 && line[0] == '\r')
}

// parse extracts the event name and data lines per the SSE spec (a single
// optional space after the colon is stripped; multiple data lines join with \n).
func parse(raw []byte) Event {
	ev := Event{Raw: raw}
	rest := raw
	first := true
	for len(rest) > 0 {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if !first {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data = append(ev.Data, value...)
			first = false
		}
	}
	return ev
}

// AppendEvent appends one event in wire form to dst.
func AppendEvent(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		data = data[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// KeepAlive is an SSE comment; clients ignore it, idle-timeout middleboxes do not.
var KeepAlive = []byte(": keep-alive\n\n")
