package proxy

import (
	"testing"

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
			if _, err := peekOpenAI(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("screen", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			p, _ := peekOpenAI(body)
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
