package compact

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// textTokensByRune is textTokens written the obvious way, one rune at a time.
func textTokensByRune(b []byte) float64 {
	var latin, cjk, wide int
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		switch {
		case r < utf8.RuneSelf:
			latin++
		case isCJK(r):
			cjk++
		case r >= 0x1F000:
			wide++
		default:
			latin++
		}
	}
	return float64(latin)/4 + float64(cjk)/1.5 + float64(wide)
}

func TestTextTokensMatchesTheRuneLoop(t *testing.T) {
	pieces := []string{"func main() {", " ", "héllo", "世界", "👍🏽", "\\\"", "ü", "한국어", "\xff", "\xe4\xb8", "naïve café", "\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 2000 {
		var b []byte
		for range rng.IntN(40) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if got, want := textTokens(b), textTokensByRune(b); got != want {
			t.Fatalf("case %d: textTokens(%q) = %v; want %v", n, b, got, want)
		}
	}
}
