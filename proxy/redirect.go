package proxy

import (
	"fmt"
	"io"
	"net/http"
)

// An upstream's redirect is neither followed nor relayed. Following it would carry the
// account's key (x-api-key and x-goog-api-key are headers net/http does not know to be
// secret, so it keeps them across hosts) and the prompt to wherever Location points;
// relaying it would have the client follow it with its own key and the prompt. So every
// request that carries an account's key goes through an http.RoundTripper, which follows
// nothing (never an http.Client), and the attempt loop turns a 3xx into the failure of that
// attempt: pool.Classify counts it as an overload (the account cools down, another account
// takes the request), and when no account answers the client gets a 502 in its own protocol
// that names the redirect's status and target origin, never its URL.

// isRedirect reports a 3xx status.
func isRedirect(status int) bool { return status >= 300 && status < 400 }

// maxRedirectTarget bounds the target named in an error: a Location header may be huge.
const maxRedirectTarget = 200

// RedirectRefused is a redirect as the error it is for whoever sent a key and did not follow
// it: its status and where it points (redirectTarget), never its URL.
func RedirectRefused(resp *http.Response) error {
	return &redirectRefused{status: resp.StatusCode, target: redirectTarget(resp)}
}

// redirectTarget is where a redirect points, as scheme://host, its Location resolved against
// the request it answers: never Location's path, query, fragment or user info, which may
// carry a key (Gemini's ?key=, a signed URL). "" when the reply names no Location it can read.
func redirectTarget(resp *http.Response) string {
	u, err := resp.Location()
	if err != nil || u.Host == "" || len(u.Scheme)+len(u.Host) > maxRedirectTarget {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// redirectRefused is an upstream's 3xx as an attempt's failure.
type redirectRefused struct {
	status int
	target string // redirectTarget; "" when Location was missing or unreadable
}

func (e *redirectRefused) Error() string {
	to := "without a Location it could read"
	if e.target != "" {
		to = "to " + e.target
	}
	return fmt.Sprintf("upstream redirected (%d %s) %s; not followed, since the account's key would go with it: check the account's base URL",
		e.status, http.StatusText(e.status), to)
}

// redirectFailure is the failure of an attempt the upstream answered with a redirect. It keeps
// neither the reply's headers (Location must not reach the client) nor its body.
func redirectFailure(resp *http.Response, up upstreamProtocol) *upstreamFailure {
	// A short body is read so the connection can serve the next request.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) //nolint:errcheck // only to reuse the connection
	return &upstreamFailure{status: resp.StatusCode, err: RedirectRefused(resp), up: up}
}
