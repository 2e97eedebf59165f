package store

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"
)

// Bodies are JSON text and compress well (typically 5–10×). DEFLATE at its fastest level keeps
// the writer goroutine cheap; a flate.Writer holds ~1 MB of state, hence the pool.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed) //nolint:errcheck // only fails for a bad level
	return w
}}

func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(&buf)
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
	if len(b) == 0 {
		return "", nil
	}
	r := flate.NewReader(bytes.NewReader(b))
	defer r.Close() //nolint:errcheck // reading from memory
	out, err := io.ReadAll(io.LimitReader(r, maxInflate))
	if err != nil {
		return "", fmt.Errorf("decompress body: %w", err)
	}
	return string(out), nil
}
