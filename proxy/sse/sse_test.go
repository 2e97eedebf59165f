package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReaderSplitsEventsKeepingRawBytes(t *testing.T) {
	stream := "event: message_start\ndata: {\"a\":1}\n\n: keep-alive\n\nevent: ping\r\ndata: {}\r\n\r\n\ndata: line1\ndata:line2\n\n"
	r := NewReader(strings.NewReader(stream), 0)
	want := []struct{ raw, name, data string }{
		{"event: message_start\ndata: {\"a\":1}\n\n", "message_start", `{"a":1}`},
		{": keep-alive\n\n", "", ""},
		{"event: ping\r\ndata: {}\r\n\r\n", "ping", "{}"},
		{"data: line1\ndata:line2\n\n", "", "line1\nline2"},
	}
	var joined strings.Builder
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: Next() error %v", i, err)
		}
		if string(ev.Raw) != w.raw || ev.Name != w.name || string(ev.Data) != w.data {
			t.Errorf("event %d = {%q %q %q}; want {%q %q %q}", i, ev.Raw, ev.Name, ev.Data, w.raw, w.name, w.data)
		}
		joined.Write(ev.Raw)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next() at end = %v; want io.EOF", err)
	}
	// Everything but the stray blank line between events is forwarded verbatim.
	if got, want := joined.String(), strings.Replace(stream, "\r\n\r\n\n", "\r\n\r\n", 1); got != want {
		t.Errorf("raw bytes not preserved:\n got %q\nwant %q", got, want)
	}
}

func TestReaderTruncatedEvent(t *testing.T) {
	r := NewReader(strings.NewReader("event: message_start\ndata: {\"a\""), 0)
	ev, err := r.Next()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Next() error = %v; want io.ErrUnexpectedEOF", err)
	}
	if ev.Name != "message_start" {
		t.Errorf("partial event name = %q; want message_start", ev.Name)
	}
}

func TestReaderRejectsOversizedEvent(t *testing.T) {
	big := "data: " + strings.Repeat("x", 100<<10) + "\n\n"
	r := NewReader(strings.NewReader(big), 64<<10)
	if _, err := r.Next(); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("Next() error = %v; want ErrEventTooLarge", err)
	}
	// A long line within the limit is fine even though it exceeds bufio's buffer.
	r = NewReader(strings.NewReader(big), 1<<20)
	ev, err := r.Next()
	if err != nil || len(ev.Data) != 100<<10 {
		t.Fatalf("Next() = %d bytes, %v; want %d bytes", len(ev.Data), err, 100<<10)
	}
}

func TestAppendEventRoundTrips(t *testing.T) {
	wire := AppendEvent(nil, "error", []byte("{\"x\":1}\n{\"y\":2}"))
	ev, err := NewReader(strings.NewReader(string(wire)), 0).Next()
	if err != nil || ev.Name != "error" || string(ev.Data) != "{\"x\":1}\n{\"y\":2}" {
		t.Fatalf("round trip = %q %q %v", ev.Name, ev.Data, err)
	}
}
