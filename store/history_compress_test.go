package store

import (
	"bytes"
	"compress/flate"
	"testing"
)

// TestCompressedBodiesAreStandardDeflate: what the writer stores reads back with the standard
// library's DEFLATE reader, byte for byte (so bodies written before and after the writer's
// implementation changed read alike), at every size around the raw/compressed threshold.
func TestCompressedBodiesAreStandardDeflate(t *testing.T) {
	text := []byte(growingSession(2)[1])
	for _, n := range []int{0, 1, minCompress - 1, minCompress, 16 << 10, len(text)} {
		stored, err := compress(nil, text[:n])
		if err != nil {
			t.Fatal(err)
		}
		if n >= minCompress {
			if stored[0] != bodyDeflate || len(stored) >= n {
				t.Fatalf("%d bytes stored as format %d, %d bytes; want DEFLATE, smaller", n, stored[0], len(stored))
			}
			var out bytes.Buffer
			if _, err := out.ReadFrom(flate.NewReader(bytes.NewReader(stored[1:]))); err != nil || !bytes.Equal(out.Bytes(), text[:n]) {
				t.Fatalf("%d bytes: compress/flate reads back %d bytes, %v", n, out.Len(), err)
			}
		}
		got, err := decompressAppend(nil, stored)
		if err != nil || !bytes.Equal(got, text[:n]) {
			t.Fatalf("%d bytes read back as %d, %v", n, len(got), err)
		}
	}
}

// BenchmarkCompressChunk compares the writer's DEFLATE with compress/flate's at BestSpeed on a
// 16 KiB chunk of tool output, the size of the chunk a session's turn stores anew.
func BenchmarkCompressChunk(b *testing.B) {
	chunk := []byte(growingSession(3)[2])[20_000 : 20_000+16<<10]
	b.Run("compress-flate", func(b *testing.B) {
		w, _ := flate.NewWriter(nil, flate.BestSpeed) //nolint:errcheck // a valid level
		var out bytes.Buffer
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			out.Reset()
			w.Reset(&out)
			w.Write(chunk) //nolint:errcheck // into memory
			w.Close()      //nolint:errcheck // into memory
		}
		b.ReportMetric(float64(out.Len()), "bytes-out")
	})
	b.Run("writer", func(b *testing.B) {
		var out []byte
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			out, _ = compress(out, chunk) //nolint:errcheck // into memory
		}
		b.ReportMetric(float64(len(out)-1), "bytes-out")
	})
}
