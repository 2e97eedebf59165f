package proxy

import (
	"bytes"
	"io"
	"testing"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/openai"
)

func BenchmarkClientScreen800KB(b *testing.B) {
	body := chatConversation(800 << 10)
	srv, err := New(Config{Compaction: CompactionConfig{ContextLimits: map[string]int{"gpt-*": 10_000_000}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	comp := srv.comp.Load()
	b.Run("peek", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := peekOpenAI(anthropic.Arrived(body), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The body copied in from a reader, then peeked (what readBody did before it peeked
	// while reading), against the peek as it reads: the copy is the arrival here, so the
	// difference is the peek's cost beyond the read.
	buf := make([]byte, len(body))
	b.Run("read-then-peek", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := io.ReadFull(bytes.NewReader(body), buf); err != nil {
				b.Fatal(err)
			}
			if _, err := peekOpenAI(anthropic.Arrived(buf), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-and-peek", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := peekOpenAI(anthropic.NewArriving(&chunkReader{body: body, size: 64 << 10}, buf), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The screen alone, from what the peek gathered: it reads no byte of the body.
	p, err := peekOpenAI(anthropic.Arrived(body), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("screen", func(b *testing.B) {
		for b.Loop() {
			if _, ok := comp.untouchedForeign(body, p, comp.target("gpt-4.1", 0, nil, nil)); !ok {
				b.Fatal("not screened")
			}
		}
	})
	b.Run("translate", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := openai.ChatRequestToAnthropic(body, openai.ChatRequestOptions{ForChat: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// chunkReader gives body in reads of at most size bytes, as a socket delivers a large upload.
type chunkReader struct {
	body []byte
	size int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.body) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.body)
	r.body = r.body[n:]
	return n, nil
}
