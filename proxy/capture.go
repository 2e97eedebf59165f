package proxy

import "io"

// defaultMaxCapture caps each captured body when Config.MaxCaptureBytes is 0.
const defaultMaxCapture = 2 << 20

// capture keeps the first limit bytes written to it (everything when limit
// <= 0) and notes that it cut. It is the one rule for what the proxy holds
// of a body beside the copy to the client: the exchange's bodies for
// history, and the relay's copy of a reply for accounting. Write never fails
// and always reports the whole write, so a capture never cuts the copy to
// the client short.
type capture struct {
	buf       []byte
	limit     int
	truncated bool
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.limit - len(c.buf); c.limit > 0 && room < n {
		c.truncated = true
		p = p[:max(room, 0)]
	}
	c.buf = append(c.buf, p...)
	return n, nil
}

// captureBytes returns a copy of at most limit bytes of b, for a record the
// observer may keep; a cut sets *truncated.
func captureBytes(b []byte, limit int, truncated *bool) []byte {
	n := len(b)
	if limit > 0 {
		n = min(n, limit)
	}
	c := capture{buf: make([]byte, 0, n), limit: limit}
	c.Write(b) //nolint:errcheck // never fails
	*truncated = *truncated || c.truncated
	return c.buf
}

// captureReply adds a capped copy of a non-stream reply to the relay's tap
// when history wants bodies, and returns what puts it on the exchange.
func captureReply(cfg *Config, tap io.Writer) (io.Writer, func(*Exchange)) {
	if !cfg.CaptureBodies {
		return tap, func(*Exchange) {}
	}
	c := &capture{limit: cfg.MaxCaptureBytes}
	return io.MultiWriter(tap, c), func(ex *Exchange) {
		ex.ReplyBody = c.buf
		ex.BodiesTruncated = ex.BodiesTruncated || c.truncated
	}
}

// keepReply puts the stream's reconstructed message on the exchange.
func (t *streamTap) keepReply() {
	body, truncated := t.reply.Bytes()
	t.ex.ReplyBody = body
	t.ex.BodiesTruncated = t.ex.BodiesTruncated || truncated
}
