package proxy

import (
	"encoding/hex"
	"net/http"
	"path"
	"strings"

	"longhaul/proxy/anthropic"
)

// routablePath refuses a request whose path has more than one spelling: one that cleans to
// another path ("//", "/./", "/../"), holds a backslash, or escapes a character that needs no
// escape (letters, digits, "-._~": %6c for "l", %2e for ".") or a slash (%2f, %5c). Escapes
// of reserved characters (%3a, %40, %20) stay: an SDK may write a model name that way. Every
// listener checks it before routing, so the path the guard
// decides on and the path the router serves are one and the same string; no client of an LLM
// API sends any of these (net/http's own answer, a redirect to the cleaned path, would turn a
// POST into a GET anyway). A trailing slash is kept: it is a different route, not a spelling.
func routablePath(r *http.Request) *Error {
	p := r.URL.Path
	if p == "" || p[0] != '/' && p != "*" {
		return unroutable(r)
	}
	if p == "/" || p == "*" {
		return nil
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") {
		clean += "/"
	}
	if clean != p || strings.IndexByte(p, '\\') >= 0 {
		return unroutable(r)
	}
	if needlessEscape(r.URL.RawPath) {
		return unroutable(r)
	}
	return nil
}

// needlessEscape reports whether raw (a path as sent, or "" when it was sent in the usual
// form) escapes an unreserved character or a slash.
func needlessEscape(raw string) bool {
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] != '%' {
			continue
		}
		b, err := hex.DecodeString(raw[i+1 : i+3])
		if err == nil && (isUnreserved(b[0]) || b[0] == '/' || b[0] == '\\') {
			return true
		}
	}
	return false
}

// isUnreserved reports whether c is one of RFC 3986's unreserved characters, whose escaped and
// plain forms are the same URI.
func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func unroutable(r *http.Request) *Error {
	return newError(http.StatusNotFound, anthropic.NotFoundError, "not a route of this server: its path must be written plainly (no //, /./, /../, backslashes or escaped slashes and dots)")
}
