package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Version is the anthropic-version sent when the caller sets none.
const Version = "2023-06-01"

// ForwardHeader says whether a client's request header (canonical name) is one of the
// Messages API's own and goes upstream with the request (proxy.HeaderAllowList; the proxy adds
// Content-Type, Accept and User-Agent for every protocol, and never forwards credentials,
// cookies or where a request came from, whatever this says). Checked against the TypeScript
// SDK's request builder (anthropic-sdk-typescript, src/client.ts buildHeaders) and what
// Claude Code sends:
//   - Anthropic-*: the API's namespace — anthropic-version (the wire format a client speaks),
//     anthropic-beta (features a request depends on), and
//     anthropic-dangerous-direct-browser-access (set by the SDK in browsers, for an origin in
//     proxy.allowed_origins);
//   - X-Stainless-*: the SDK's platform, version, retry-count and timeout headers, which the
//     API reads for its limits and diagnostics;
//   - X-App: Claude Code names itself with it ("cli").
func ForwardHeader(name string) bool {
	return strings.HasPrefix(name, "Anthropic-") || strings.HasPrefix(name, "X-Stainless-") || name == "X-App"
}

// NewHTTPRequest builds a request to the Anthropic API of an upstream: every
// request Longhaul sends upstream (forwarded client requests, Layer-3
// summary calls, the app's key test) is built here.
//
//   - The URL is baseURL (an account's, e.g. https://api.anthropic.com; a
//     trailing slash, surrounding space or a gateway's path prefix is fine)
//     joined with path, which starts with "/" and may carry a query
//     ("/v1/messages?beta=true").
//   - header, when not nil, becomes the request's Header: a caller passes a
//     map it built (a client's end-to-end headers). Any credential in it is
//     removed, and key is sent as x-api-key (none when key is empty);
//     anthropic-version is Version unless header sets one; Content-Type is
//     application/json when there is a body and header sets none.
//   - body is read as http.NewRequestWithContext reads it (a *bytes.Reader
//     gets ContentLength and GetBody); nil for none, after which the caller
//     may set Body, ContentLength and GetBody itself.
//
// The request carries ctx, so cancelling the client's request cancels it.
func NewHTTPRequest(ctx context.Context, method, baseURL, path, key string, header http.Header, body io.Reader) (*http.Request, error) {
	url := strings.TrimRight(strings.TrimSpace(baseURL), "/") + path
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("bad base URL: %w", err)
	}
	if header != nil {
		req.Header = header
	}
	h := req.Header
	h.Del("X-Api-Key")
	h.Del("Authorization")
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	if h.Get("Anthropic-Version") == "" {
		h.Set("Anthropic-Version", Version)
	}
	if body != nil && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return req, nil
}
