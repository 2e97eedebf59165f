package store

import (
	"strings"
	"testing"
)

func BenchmarkRedactSmallTmp(b *testing.B) {
	body := []byte(smallExchange(1).Bodies.Request)
	reply := []byte(smallExchange(1).Bodies.Reply)
	b.Run("req", func(b *testing.B) {
		for b.Loop() {
			Redact(body)
		}
	})
	b.Run("reply", func(b *testing.B) {
		for b.Loop() {
			Redact(reply)
		}
	})
	b.Run("fields", func(b *testing.B) {
		e := smallExchange(1)
		for b.Loop() {
			x := e
			redactExchange(&x, nil)
		}
	})
	_ = strings.Repeat
}
