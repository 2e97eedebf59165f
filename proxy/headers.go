package proxy

import (
	"mime"
	"net/http"
	"strings"
)

// hopHeaders apply to one connection only and are never forwarded (RFC 9110 §7.6.1).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// copyHeader copies end-to-end headers from src to dst: hop-by-hop headers,
// those named in Connection, and CORS grants (the proxy grants no origin
// anything) are left out.
func copyHeader(dst, src http.Header) {
	var named []string
	for _, v := range src["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				named = append(named, http.CanonicalHeaderKey(f))
			}
		}
	}
outer:
	for k, vv := range src {
		for _, h := range hopHeaders {
			if k == h {
				continue outer
			}
		}
		for _, h := range named {
			if k == h {
				continue outer
			}
		}
		if strings.HasPrefix(k, "Access-Control-") {
			continue
		}
		dst[k] = append(dst[k][:0:0], vv...)
	}
}

func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}
