package proxy

import (
	"mime"
	"net/http"
	"slices"
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

// HeaderAllowList says whether a client's request header (by its canonical name) may go
// upstream. Each protocol package has one (anthropic.ForwardHeader); a new protocol adds its
// own and passes it to forwardHeaders.
type HeaderAllowList func(name string) bool

// forwardCommon are the headers every protocol forwards: what the body is, what the client
// accepts, and who the client is (upstreams tune replies and limits by user agent).
// Accept-Encoding is not among them: the Transport negotiates compression itself so the relay
// can read the events it passes on.
func forwardCommon(name string) bool {
	switch name {
	case "Content-Type", "Accept", "User-Agent":
		return true
	}
	return false
}

// neverForward holds what no allow-list may let through, whatever a protocol says: the
// client's credentials (the account's replace them), browser state and where the request came
// from (cookies, Origin, Referer, Fetch Metadata), and what a proxy in front of Longhaul added.
func neverForward(name string) bool {
	switch name {
	case "Authorization", "Proxy-Authorization", "X-Api-Key", "Cookie", "Origin", "Referer",
		"Forwarded", "X-Real-Ip", "Host", "Content-Length":
		return true
	}
	return strings.HasPrefix(name, "Sec-") || strings.HasPrefix(name, "X-Forwarded-")
}

// forwardHeaders returns the headers an upstream request carries from the client's src: only
// those forwardCommon or protocol allow, never a hop-by-hop one or one neverForward names.
// An allow-list, not a deny-list: a header nobody thought about stays local.
func forwardHeaders(src http.Header, protocol HeaderAllowList) http.Header {
	dst := make(http.Header, 8)
	for k, vv := range src {
		if neverForward(k) || slices.Contains(hopHeaders, k) || !(forwardCommon(k) || protocol(k)) {
			continue
		}
		dst[k] = append([]string(nil), vv...)
	}
	return dst
}

func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}
