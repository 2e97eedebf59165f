package anthropic

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Strings are skipped eight bytes at a time (SWAR: a uint64 holds b[i:i+8],
// byte j in bits 8j..8j+7). Code in tool results is dense in quotes, nearly
// all of them escaped (a \" every ~17 bytes), so stopping at each quote to
// count the backslashes before it would dominate. Instead each word yields a
// mask of candidates, the quotes that may close the string. A quote is
// escaped for sure when the byte before it is a backslash and the byte before
// that is not (a run of exactly one backslash): those never leave the loop.
// The other quotes, those after a non-backslash (always unescaped) and the
// rare ones after two or more backslashes, are checked exactly by counting
// the run (evenBackslashes). The bytes before b[i:i+8] come from loads one and
// two bytes earlier rather than from shifts with a carry across words, so the
// scan needs no state but the position.

const (
	lows7   = 0x7f7f7f7f7f7f7f7f
	highs   = 0x8080808080808080
	quotes  = 0x2222222222222222
	slashes = 0x5c5c5c5c5c5c5c5c
	allOnes = ^uint64(0)
)

// How scanString alternates between IndexByte and the masks: after a probe
// that skipped at least sparseGap bytes, the masks cover sparseSpan bytes (one
// block) before the next probe; after a shorter one, denseSpan bytes. (On
// text with a quote every g bytes, probing wins from g ≈ 80 on; the masks win
// by far on code, with a quote every ~17 bytes.)
const sparseGap, sparseSpan, denseSpan = 64, 32, 16 << 10

// swar holds the mask constants in a variable so that the loops load them
// into registers once instead of rematerializing them (a 10-byte MOV each).
var swar = [...]uint64{lows7, highs, quotes, slashes, ^uint64(slashes)}

// nonCandidates returns, in the high bit of each byte, which bytes of x cannot
// close the string: x holds b[i:i+8], z b[i-1:i+7] and w b[i-2:i+6]; m7, hi,
// qs, bs and nbs are lows7, highs, quotes, slashes and ^slashes. A byte's high
// bit is clear iff x's byte is '"' and z's is not '\\' or w's is '\\' (or, w
// being used loosely, a byte >= 0x80 whose low seven bits are those of '\\').
// Each part is exact per byte, with no carry or borrow into the next byte:
//
//   - ((x&m7)^qs)+m7 sets a byte's high bit iff its low seven bits differ from
//     those of '"' (at most 0x7f+0x7f = 0xfe, no carry); or-ing in x adds the
//     bytes >= 0x80. High bits: the bytes of x that are not '"'.
//   - For u = z^nbs (a byte is 0xff iff z's is '\\'), (u|hi)-m7 is
//     (u&0x7f)+1 per byte (from 0x80..0xff minus 0x7f, no borrow), whose high
//     bit is set iff u's low seven bits are all ones; and-ing with u drops
//     the bytes of z >= 0x80. High bits: the backslashes of z.
//   - ((w&m7)^bs)+m7 as for quotes: the bytes of w whose low seven bits
//     differ from '\\'. Leaving out "| w" lets a byte >= 0x80 pass for a
//     backslash, which only adds candidates, never hides one.
func nonCandidates(x, z, w, m7, hi, qs, bs, nbs uint64) uint64 {
	u := z ^ nbs
	return ((x&m7 ^ qs) + m7) | x | ((w&m7^bs)+m7)&((u|hi)-m7)&u
}

// scanString returns the index of the quote closing a string whose contents
// begin at b[start] (b[start-1] is its opening quote), looking at b[i:] (the
// caller knows that b[start:i] holds no closing quote), or -1 if b[i:] holds
// none. It is stateless: to resume where a previous call stopped, pass that
// call's len(b) as i.
func scanString(b []byte, start, i int) int {
	// The masks need b[i-2] and b[i-1]: a string opening at b[0] starts
	// bytewise. At i == start they hold the opening quote, which is not a
	// backslash, and the byte before it, which then does not matter.
	for ; i < 2 && i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	m7, hi, qs, bs, nbs := swar[0], swar[1], swar[2], swar[3], swar[4]
	// Words go one by one up to lim, then (from stop on, after a new probe)
	// through quietBlocks. Most strings are short and end within the first
	// 32 bytes, which go word by word.
	lim, stop := i+32, 0
	for i <= len(b)-8 {
		if i >= lim {
			if i >= stop {
				// IndexByte's vector loop is faster than the masks across
				// runs without quotes (prose, base64 data). It stops at
				// the next quote, escaped or not, and the masks resume
				// there. Where quotes are sparse the masks only cover the
				// next block before probing again; where they are dense,
				// a long stretch.
				k := bytes.IndexByte(b[i:], '"')
				if k < 0 {
					i = len(b)
					break
				}
				i += k
				stop = i + sparseSpan
				if k < sparseGap {
					stop = i + denseSpan
				}
			}
			i = quietBlocks(b[:min(stop, len(b))], i)
			// Then word by word through a block with a candidate, or what
			// is left up to stop.
			lim = min(i+32, stop)
			continue
		}
		p := b[i-2 : i+8]
		x := binary.LittleEndian.Uint64(p[2:])
		z := binary.LittleEndian.Uint64(p[1:])
		w := binary.LittleEndian.Uint64(p)
		t := nonCandidates(x, z, w, m7, hi, qs, bs, nbs)
		for c := ^(t | m7); c != 0; c &= c - 1 {
			k := i + bits.TrailingZeros64(c)>>3
			if evenBackslashes(b, start, k) {
				return k
			}
		}
		i += 8
	}
	for ; i < len(b); i++ {
		if b[i] == '"' && evenBackslashes(b, start, i) {
			return i
		}
	}
	return -1
}

// quietBlocks skips the 32-byte blocks of b[i:] (i >= 2) that hold no
// candidate and returns the start of the first block that holds one, or of
// the last, shorter block.
func quietBlocks(b []byte, i int) int {
	m7, hi, qs, bs, nbs := swar[0], swar[1], swar[2], swar[3], swar[4]
	le := binary.LittleEndian
	p := b[i-2:]
	for len(p) >= 34 {
		t := nonCandidates(le.Uint64(p[2:]), le.Uint64(p[1:]), le.Uint64(p), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[10:]), le.Uint64(p[9:]), le.Uint64(p[8:]), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[18:]), le.Uint64(p[17:]), le.Uint64(p[16:]), m7, hi, qs, bs, nbs)
		t &= nonCandidates(le.Uint64(p[26:]), le.Uint64(p[25:]), le.Uint64(p[24:]), m7, hi, qs, bs, nbs)
		if t|m7 != allOnes {
			break
		}
		p = p[32:]
	}
	return len(b) - len(p) + 2
}

// stringEnd returns the index of the quote that closes the JSON string
// whose opening quote is b[start-1], or -1 if b holds none.
func stringEnd(b []byte, start int) int { return scanString(b, start, start) }

// evenBackslashes reports whether the run of backslashes ending just before
// b[k] (and starting no earlier than b[start]) has even length, i.e. whether a
// quote at b[k] is unescaped.
func evenBackslashes(b []byte, start, k int) bool {
	j := k
	for j > start && b[j-1] == '\\' {
		j--
	}
	return (k-j)%2 == 0
}
