package store

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"

	fastflate "github.com/klauspost/compress/flate"
)

// Bodies are JSON text and compress well (typically 5–10×). DEFLATE at its fastest level keeps
// the writer goroutine cheap; a writer holds ~1 MB of state, hence the pool. The writer is
// klauspost/compress's DEFLATE: the same format (the standard library reads it, so bodies
// stored before read as ever), measured at about twice the speed of compress/flate at
// BestSpeed on a 16 KiB chunk of tool output (BenchmarkCompressChunk), for the same size.
var flateWriters = sync.Pool{New: func() any {
	w, _ := fastflate.NewWriter(nil, fastflate.BestSpeed) //nolint:errcheck // only fails for a bad level
	return w
}}

// Stored bodies start with a format byte. Small bodies are kept raw: DEFLATE builds its
// Huffman tables for every body, 20–40 µs whatever the size below a few kilobytes
// (BenchmarkWriteSmallExchanges: it was the largest cost of a ~1 KB exchange, more than its
// rows), while what it saves on such a body is a kilobyte or two.
const (
	bodyRaw     = 0
	bodyDeflate = 1
	// minCompress is the size from which a body is compressed.
	minCompress = 4 << 10
)

// compress appends the stored form of b (format byte, then the bytes raw or compressed) to
// dst[:0] and returns it: the writer passes its own buffer, reused from row to row, since the
// driver copies a blob when it binds it.
func compress(dst, b []byte) ([]byte, error) {
	dst = dst[:0]
	if len(b) < minCompress {
		return append(append(dst, bodyRaw), b...), nil
	}
	buf := bytes.NewBuffer(dst)
	buf.Grow(len(b)/4 + 64)
	buf.WriteByte(bodyDeflate)
	w := flateWriters.Get().(*fastflate.Writer)
	defer flateWriters.Put(w)
	w.Reset(buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxInflate bounds a decompressed body, whatever a corrupt blob claims.
const maxInflate = 64 << 20

func decompress(b []byte) (string, error) {
	out, err := decompressAppend(nil, b)
	return string(out), err
}

// decompressAppend appends the bytes a stored blob (a whole body or one chunk) holds to dst.
func decompressAppend(dst, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return dst, nil
	}
	switch b[0] {
	case bodyRaw:
		return append(dst, b[1:]...), nil
	case bodyDeflate:
	default:
		return dst, fmt.Errorf("decompress body: unknown format %d", b[0])
	}
	r := flate.NewReader(bytes.NewReader(b[1:]))
	defer r.Close() //nolint:errcheck // reading from memory
	buf := bytes.NewBuffer(dst)
	if _, err := buf.ReadFrom(io.LimitReader(r, maxInflate)); err != nil {
		return dst, fmt.Errorf("decompress body: %w", err)
	}
	return buf.Bytes(), nil
}
