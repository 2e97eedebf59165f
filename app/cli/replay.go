package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"longhaul/app/bundle"
	"longhaul/store"
)

// historyBundle is `longhaul history bundle ID`: the exchange's repro bundle (app/bundle) on
// stdout, with the client key and every account key masked.
func (c *CLI) historyBundle(_ *flag.FlagSet) action {
	return func(ctx context.Context, st *store.Store, rest []string) error {
		if len(rest) != 1 {
			return c.usage()
		}
		if isTerminal(c.Stdout) {
			return errors.New("the bundle is a zip: redirect it to a file (longhaul history bundle " + rest[0] + " > bundle.zip)")
		}
		ex, err := st.Exchange(ctx, rest[0])
		if err != nil {
			return err
		}
		settings, err := st.Settings(ctx)
		if err != nil {
			return err
		}
		secrets, err := accountSecrets(ctx, st)
		if err != nil {
			return err
		}
		if err := bundle.Write(c.Stdout, ex, settings, c.meta(), secrets, st.LeakRules()); err != nil {
			return err
		}
		fmt.Fprintf(c.Stderr, "wrote the repro bundle of %s; secrets and key-shaped strings are masked, but look through it before you share it\n", ex.ID)
		return nil
	}
}

// accountSecrets are the keys of every account, for the bundle to mask wherever they occur.
func accountSecrets(ctx context.Context, st *store.Store) ([]string, error) {
	accounts, err := st.Accounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("read accounts (their keys are masked in the bundle): %w", err)
	}
	var secrets []string
	for _, a := range accounts {
		if a.Secret != "" {
			secrets = append(secrets, a.Secret)
		}
	}
	return secrets, nil
}

func (c *CLI) meta() bundle.Meta {
	v := c.Version
	if v == "" {
		v = "dev"
	}
	return bundle.Meta{Version: v, GOOS: c.GOOS, GOARCH: c.GOARCH}
}

// isTerminal reports whether w is a terminal, where a zip would only garble the screen.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// replay is `longhaul replay FILE --base-url URL [--key -]`: it re-sends a bundle's request as
// the client sent it, to the same route under URL (a Longhaul, or a scripted upstream), and
// prints the status and the reply, a stream event by event. It opens no store: it sends no key
// but the one given with --key, and only to the URL given: a redirect is printed, not
// followed, and fails the command.
func (c *CLI) replay(fs *flag.FlagSet) action {
	baseURL := fs.String("base-url", "", "where to send it (required): a Longhaul such as http://127.0.0.1:8045, or a scripted upstream")
	key := fs.String("key", "", "client key to send, or - to read it from stdin (default: none)")
	return func(ctx context.Context, _ *store.Store, rest []string) error {
		if len(rest) != 1 {
			return c.usage()
		}
		base, err := replayBase(*baseURL)
		if err != nil {
			return err
		}
		b, err := readBundle(rest[0])
		if err != nil {
			return err
		}
		secret := *key
		if secret == "-" {
			if secret, err = c.readLine("key"); err != nil {
				return err
			}
		}
		req, err := replayRequest(ctx, b, base, secret, c.meta().Version)
		if err != nil {
			return err
		}
		transport := c.Transport
		if transport == nil {
			transport = http.DefaultTransport // no overall timeout: a stream lasts as long as it lasts; ^C cancels
		}
		// Sent by the RoundTripper itself, never an http.Client: a client follows a redirect and
		// keeps x-api-key and x-goog-api-key on it (net/http strips only Authorization and
		// Cookie across hosts), and would send the bundle's body along.
		res, err := transport.RoundTrip(req)
		if err != nil {
			return fmt.Errorf("replay %s: %s %s: %w", rest[0], req.Method, req.URL.Redacted(), err)
		}
		defer res.Body.Close() //nolint:errcheck // read to the end or cancelled
		fmt.Fprintf(c.Stderr, "%s %s → %s\n", req.Method, req.URL.Redacted(), res.Status)
		if res.StatusCode >= 300 && res.StatusCode < 400 {
			location := redirectLocation(res)
			fmt.Fprintf(c.Stderr, "Location: %s\n", location)
			return fmt.Errorf("replay %s: answered %s to %s; not followed, since the request and any --key would go with it (point --base-url at that server if you trust it)",
				rest[0], res.Status, location)
		}
		if err := copyReply(c.Stdout, res); err != nil {
			return fmt.Errorf("replay %s: read the reply: %w", rest[0], err)
		}
		if res.StatusCode >= 400 {
			return fmt.Errorf("replay %s: answered %s", rest[0], res.Status)
		}
		return nil
	}
}

// redirectLocation is a redirect's Location as printed: resolved against the request, without
// user info, query or fragment (where URLs carry keys: Gemini's ?key=, signed links), and
// key-shaped parts of the rest masked.
func redirectLocation(res *http.Response) string {
	u, err := res.Location()
	if err != nil {
		return "(no Location it could read)"
	}
	shown := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	if u.RawQuery != "" {
		shown += "?(query not shown)"
	}
	return store.RedactString(shown)
}

// replayBase checks --base-url: given, http or https, a host, no credentials.
func replayBase(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("--base-url is required: where to send the request, e.g. http://127.0.0.1:8045 (a bundle is never sent anywhere you did not name)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, fmt.Errorf("--base-url %q: want http(s)://host[:port][/path]", raw)
	}
	return u, nil
}

func readBundle(path string) (bundle.Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return bundle.Bundle{}, err
	}
	defer f.Close() //nolint:errcheck // read-only
	fi, err := f.Stat()
	if err != nil {
		return bundle.Bundle{}, err
	}
	b, err := bundle.Read(f, fi.Size())
	if err != nil {
		return bundle.Bundle{}, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// geminiPath is a Gemini API method path as the proxy serves it (proxy/server.go, geminiCall).
var geminiPath = regexp.MustCompile(`^/v1beta/models/[^/?#]+:(generateContent|streamGenerateContent|countTokens)$`)

// replayRoutes are the model API routes a bundle may be re-sent to (proxy/server.go's POST
// routes): a bundle is someone else's file, and its path must not reach anything else.
var replayRoutes = []string{"/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions", "/v1/responses"}

// replayRequest builds the request that re-sends b's received body to its route under base.
// Only what the history keeps can be re-sent: the body and the path, not the client's
// headers; the headers each protocol needs are set here.
func replayRequest(ctx context.Context, b bundle.Bundle, base *url.URL, key, version string) (*http.Request, error) {
	m := b.Manifest
	if len(b.Request) == 0 {
		return nil, errors.New("the bundle holds no request body (history.store_bodies was off, or the body was dropped by retention)")
	}
	if !json.Valid(b.Request) {
		return nil, errors.New("the bundle's request.json is not JSON (cut at history.max_body_bytes when it was recorded?): it cannot be re-sent")
	}
	if m.Method != "" && m.Method != http.MethodPost {
		return nil, fmt.Errorf("the bundle's request is %s %s; only POST model requests are re-sent", m.Method, m.Path)
	}
	gemini := geminiPath.MatchString(m.Path)
	if !gemini && !slices.Contains(replayRoutes, m.Path) {
		return nil, fmt.Errorf("the bundle's path %q is not a model API route (%s, /v1beta/models/{model}:generateContent…)", m.Path, strings.Join(replayRoutes, ", "))
	}
	target := base.JoinPath(m.Path)
	if gemini && strings.HasSuffix(m.Path, ":streamGenerateContent") {
		// History keeps the path, not the query. Gemini SDKs ask for a stream as SSE; the other
		// form (a JSON array) is not what a maintainer wants to read event by event.
		target.RawQuery = "alt=sse"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(b.Request))
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "longhaul-replay/"+version)
	switch {
	case strings.HasPrefix(m.Path, "/v1/messages"):
		// The Messages API's one version (docs.anthropic.com/en/api/versioning).
		req.Header.Set("anthropic-version", "2023-06-01")
		if key != "" {
			req.Header.Set("x-api-key", key)
		}
	case gemini:
		if key != "" {
			req.Header.Set("x-goog-api-key", key)
		}
	default:
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	return req, nil
}

// copyReply prints the reply: an event stream event by event as each arrives (so a stalled
// stream shows where it stalled), anything else as it comes.
func copyReply(w io.Writer, res *http.Response) error {
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, err := io.Copy(w, res.Body)
		return err
	}
	r := bufio.NewReader(res.Body)
	var event []byte
	for {
		line, err := r.ReadBytes('\n')
		event = append(event, line...)
		if len(bytes.TrimRight(line, "\r\n")) == 0 && len(event) > 0 || err != nil && len(event) > 0 {
			if _, werr := w.Write(event); werr != nil {
				return werr
			}
			event = event[:0]
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
