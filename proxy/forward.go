package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
)

// statusClientClosed records a client that hung up (nginx's convention).
const statusClientClosed = 499

// maxErrorBody bounds how much of an upstream error reply is held for
// passing on after a failed retry.
const maxErrorBody = 1 << 20

// forward runs one API request: read and peek the body, compact it when it
// needs it, try accounts until one answers or attempts run out, relay the
// answer, record the exchange.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, cfg *Config, comp *compactor, route string, hasBody bool) {
	ex := &Exchange{
		ID: newExchangeID(), State: ExchangeStarted, Route: route, Method: r.Method, Path: r.URL.Path,
		UserAgent: r.UserAgent(), RemoteAddr: r.RemoteAddr, Start: s.now(),
	}
	w.Header().Set("Longhaul-Request-Id", ex.ID)
	var body *requestBody
	var peek anthropic.Peek
	if hasBody {
		var ok bool
		if body, peek, ok = s.inbound(w, r, cfg, ex, route); !ok {
			return
		}
		defer body.release()
	}
	s.observer.Observe(*ex)

	out, e := s.prepare(r, cfg, comp, ex, route, body, peek)
	if e != nil {
		s.finish(ex, e.Status, e)
		writeError(w, e)
		return
	}
	if hasBody && (cfg.CaptureBodies || out.compacted.Changed) {
		ex.keepRequestBody(body, cfg.MaxCaptureBytes)
	}
	last, answered := s.tryAccounts(w, r, cfg, comp, ex, out)
	if answered {
		return
	}
	if route == "count_tokens" && comp != nil && last != nil && countUnsupported(last) {
		s.countLocally(w, comp, ex, body.buf)
		return
	}
	s.passOn(w, cfg, ex, last)
}

// outbound is what every attempt of one request sends.
type outbound struct {
	// body is the client's bytes, or the compacted rewrite of them (a new
	// buffer; the client's is never modified).
	body      *requestBody
	modelSpan anthropic.Span // where the model name is in body, for the model map
	compacted compact.Result
	screened  bool // the screen looked at it: pressure can be read from the reply's usage
}

// prepare runs the compaction stage on a Messages request and returns what
// the attempts send.
func (s *Server) prepare(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, route string, body *requestBody, peek anthropic.Peek) (outbound, *Error) {
	out := outbound{body: body, modelSpan: peek.ModelSpan}
	if route != "messages" || comp == nil {
		return out, nil
	}
	var e *Error
	out.body, out.compacted, out.screened, e = s.compactStage(r, cfg, comp, ex, body, peek)
	if e != nil {
		return out, e
	}
	if out.compacted.Changed {
		out.modelSpan = anthropic.Span{} // where the model is in the rewrite
		if p, err := anthropic.PeekRequest(out.body.buf); err == nil {
			out.modelSpan = p.ModelSpan
		}
	}
	return out, nil
}

// tryAccounts is the attempt loop. It reports answered when the client has
// its answer (a reply relayed, no account to try, or the client gone);
// otherwise last is the upstream failure to pass on.
func (s *Server) tryAccounts(w http.ResponseWriter, r *http.Request, cfg *Config, comp *compactor, ex *Exchange, out outbound) (last *upstreamFailure, answered bool) {
	var exclude []int64
	for attempt := range cfg.MaxAttempts {
		acct, err := s.pool.Pick(pool.Pick{Model: ex.Model, SessionID: ex.SessionID, Exclude: exclude}, s.now())
		if err != nil {
			if last != nil {
				return last, false // pass on the last upstream failure: it says more than "no account"
			}
			s.refuseNoAccount(w, ex, err)
			return nil, true
		}
		att := Attempt{AccountID: acct.ID, AccountName: acct.Name(), Start: s.now()}
		sendBody := out.body
		ex.ModelSent = ex.Model
		if model, ok := pool.MapModel(cfg.ModelMap, ex.Model, acct); ok && model != ex.Model && out.modelSpan.End > 0 {
			sendBody, ex.ModelSent = staticBody(anthropic.WithModel(out.body.buf, out.modelSpan, model)), model
		}
		fail, committed := s.attempt(w, r, cfg, ex, acct, sendBody)
		if sendBody != out.body {
			sendBody.release()
		}
		att.Duration = s.now().Sub(att.Start)
		if committed || fail == nil {
			att.Status = ex.Status
			ex.Attempts = append(ex.Attempts, att)
			s.answered(ex, acct, comp, out)
			return nil, true
		}
		att.Status, att.Error = fail.status, fail.message()
		ex.Attempts = append(ex.Attempts, att)
		if r.Context().Err() != nil {
			// The client left; the attempt says nothing about the account.
			s.finish(ex, statusClientClosed, newError(statusClientClosed, "client_cancelled", "client closed the request"))
			return nil, true
		}
		outcome := pool.Classify(fail.status, fail.header, fail.body, int(ex.BytesIn), s.now())
		cooldown := s.pool.Report(acct.ID, ex.Model, outcome, s.now())
		last = fail
		if !outcome.Kind.Retryable() {
			return last, false
		}
		s.log.Info("upstream attempt failed", "id", ex.ID, "account", acct.Name(), "model", ex.Model,
			"status", fail.status, "err", fail.message(), "cooldown", cooldown)
		exclude = append(exclude, acct.ID)
		if outcome.Kind == pool.OutcomeOverloaded && attempt+1 < cfg.MaxAttempts && !sleepCtx(r.Context(), retryBackoff(attempt)) {
			s.finish(ex, statusClientClosed, newError(statusClientClosed, "client_cancelled", "client closed the request"))
			return nil, true
		}
	}
	return last, false
}

// refuseNoAccount answers 503 when the pool has no account to try, saying why
// (and until when, as Retry-After, when all are cooling down).
func (s *Server) refuseNoAccount(w http.ResponseWriter, ex *Exchange, err error) {
	e := newError(http.StatusServiceUnavailable, anthropic.OverloadedError, err.Error())
	var na *pool.NoAccountError
	if errors.As(err, &na) {
		e.RetryAfter = na.RetryAfter
	}
	s.finish(ex, e.Status, e)
	writeError(w, e)
}

// answered records an attempt whose reply reached the client, teaches the
// pool and the estimator what it showed, and aborts the connection if the
// relay was cut short.
func (s *Server) answered(ex *Exchange, acct pool.Account, comp *compactor, out outbound) {
	if out.screened {
		ex.pressureFromUsage()
	}
	s.finish(ex, ex.Status, nil)
	s.pool.Report(acct.ID, ex.Model, ex.outcome(), s.now())
	if comp != nil {
		s.learn(comp, out.compacted, ex)
	}
	if ex.abort {
		// Abort the connection so the client sees a truncated reply, not a complete one.
		panic(http.ErrAbortHandler)
	}
}

// countUnsupported reports an upstream answer that means "no token counting
// here" (an OpenAI-compatible or older endpoint) rather than a verdict on the
// request, such as Anthropic's 404 for an unknown model.
func countUnsupported(f *upstreamFailure) bool {
	switch f.status {
	case http.StatusNotFound:
		return !(f.errorType() == anthropic.NotFoundError && strings.Contains(strings.ToLower(f.message()), "model"))
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

// countLocally answers count_tokens from the calibrated estimator, in the
// API's own shape, when the upstream cannot count.
func (s *Server) countLocally(w http.ResponseWriter, comp *compactor, ex *Exchange, body []byte) {
	n, err := comp.pipe.Count(body, ex.Model, ex.SessionID)
	if err != nil {
		e := newError(http.StatusBadRequest, anthropic.InvalidRequestError, "cannot count tokens: "+err.Error())
		s.finish(ex, e.Status, e)
		writeError(w, e)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Longhaul-Token-Count", "estimated")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `{"input_tokens":%d}`, n)
	ex.ErrorType, ex.ErrorMessage = "", ""
	ex.TokensBefore, ex.TokensAfter = n, n
	s.finish(ex, http.StatusOK, nil)
}

// compactStage screens a /v1/messages request and, unless the screen shows
// the engine would leave it alone, runs the compaction pipeline on it. It
// returns the body to send (body itself when nothing changed).
func (s *Server) compactStage(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, body *requestBody, peek anthropic.Peek) (*requestBody, compact.Result, bool, *Error) {
	betas := compact.ParseBetas(r.Header.Values("Anthropic-Beta"))
	limit, screened := comp.untouched(peek, body.buf, ex.Model, ex.SessionID, betas)
	ex.ContextLimit = limit
	if screened {
		return body, compact.Result{}, true, nil
	}
	res, e := s.compactRequest(r.Context(), comp, ex, body.buf, betas)
	if e != nil {
		ex.keepRequestBody(body, cfg.MaxCaptureBytes) // the original, for the record
		return body, res, false, e
	}
	if !res.Changed {
		return body, res, false, nil
	}
	ex.ForwardedBody = captureBytes(res.Body, cfg.MaxCaptureBytes, &ex.BodiesTruncated)
	return staticBody(res.Body), res, false, nil
}

// retryBackoff is the pause before retrying after an overload: short, since
// the next attempt goes to another account.
func retryBackoff(attempt int) time.Duration {
	return 50 * time.Millisecond << min(attempt, 4)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// finish records the final state of an exchange and hands it to the observer.
func (s *Server) finish(ex *Exchange, status int, e *Error) {
	ex.State, ex.End, ex.Status = ExchangeFinished, s.now(), status
	if e != nil && ex.ErrorType == "" {
		ex.ErrorType, ex.ErrorMessage = e.Type, e.Message
	}
	ex.takeRequestBody()
	s.observer.Observe(*ex)
}

// passOn answers with the last upstream failure: its own status and body when
// the upstream answered, 502 when it could not be reached.
func (s *Server) passOn(w http.ResponseWriter, cfg *Config, ex *Exchange, f *upstreamFailure) {
	if f.status == 0 {
		e := newError(http.StatusBadGateway, anthropic.APIError, "upstream unreachable: "+f.message())
		if errors.Is(f.err, errFirstEventTimeout) {
			e = newError(http.StatusGatewayTimeout, anthropic.TimeoutError, f.message())
		}
		s.finish(ex, e.Status, e)
		writeError(w, e)
		return
	}
	copyHeader(w.Header(), f.header)
	w.Header().Del("Content-Length")
	w.WriteHeader(f.status)
	w.Write(f.body) //nolint:errcheck // client gone
	ex.ErrorType, ex.ErrorMessage = f.errorType(), f.message()
	if cfg.CaptureBodies {
		ex.ReplyBody = captureBytes(f.body, cfg.MaxCaptureBytes, &ex.BodiesTruncated)
	}
	s.finish(ex, f.status, nil)
}

// upstreamFailure is an attempt that failed before anything reached the client.
type upstreamFailure struct {
	status int // 0: no response (connection error, timeout, empty stream)
	header http.Header
	body   []byte
	err    error
}

func (f *upstreamFailure) errorType() string {
	if e, ok := anthropic.ParseError(f.body); ok && e.Type != "" {
		return e.Type
	}
	if f.status == 0 {
		return anthropic.APIError
	}
	return http.StatusText(f.status)
}

func (f *upstreamFailure) message() string {
	if f.err != nil {
		return f.err.Error()
	}
	if e, ok := anthropic.ParseError(f.body); ok && e.Message != "" {
		return e.Message
	}
	return fmt.Sprintf("upstream answered %d", f.status)
}

var errFirstEventTimeout = errors.New("upstream sent no response in time")

// attempt sends the request to one account. It returns a failure when nothing
// was written to the client (so another account may be tried); committed
// reports that the response started, after which errors go in-band.
func (s *Server) attempt(w http.ResponseWriter, r *http.Request, cfg *Config, ex *Exchange, acct pool.Account, body *requestBody) (fail *upstreamFailure, committed bool) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	// The timeout covers the wait for the first event of a stream, or the
	// whole of a non-stream reply; a healthy long stream is never cut.
	deadline := time.AfterFunc(cfg.RequestTimeout, func() { cancel(errFirstEventTimeout) })
	defer deadline.Stop()

	out, err := outboundRequest(ctx, r, acct, body)
	if err != nil {
		return &upstreamFailure{err: err}, false
	}
	resp, err := s.transport.RoundTrip(out)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && r.Context().Err() == nil {
			err = cause
		}
		return &upstreamFailure{err: err}, false
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil && len(b) == 0 {
			return &upstreamFailure{err: fmt.Errorf("read upstream %d reply: %w", resp.StatusCode, err)}, false
		}
		return &upstreamFailure{status: resp.StatusCode, header: resp.Header, body: b}, false
	}
	if isEventStream(resp.Header) {
		return s.relayStream(ctx, w, cfg, ex, resp, deadline, body)
	}
	return s.relayBody(ctx, w, cfg, ex, resp)
}

// outboundRequest builds the upstream request from the buffered body; the
// inbound request is never modified, so a retry can build it again.
func outboundRequest(ctx context.Context, in *http.Request, acct pool.Account, body *requestBody) (*http.Request, error) {
	path := in.URL.Path
	if in.URL.RawQuery != "" {
		path += "?" + in.URL.RawQuery
	}
	// Only allow-listed headers go upstream (forwardHeaders); the client's
	// key is replaced by the account's.
	h := forwardHeaders(in.Header, anthropic.ForwardHeader)
	out, err := anthropic.NewHTTPRequest(ctx, in.Method, acct.BaseURL, path, acct.Secret, h, nil)
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", acct.Name(), err)
	}
	if body != nil {
		out.Body = body.reader()
		out.ContentLength = int64(len(body.buf))
		// Lets the Transport replay the body on a stale keep-alive connection.
		out.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
	}
	return out, nil
}

// inbound reads an API request's body and records what the peek found on
// ex: model, session and whether it streams. A failure has been answered
// (unless the client left) and recorded when ok is false.
func (s *Server) inbound(w http.ResponseWriter, r *http.Request, cfg *Config, ex *Exchange, route string) (body *requestBody, peek anthropic.Peek, ok bool) {
	body, peek, e := s.readBody(r, cfg.MaxBodyBytes)
	if e != nil {
		s.finish(ex, e.Status, e)
		if e.Status != statusClientClosed {
			writeError(w, e)
		}
		return nil, peek, false
	}
	ex.BytesIn = int64(len(body.buf))
	ex.Model, ex.SessionID = peek.Model, peek.SessionID(body.buf)
	ex.Stream = route == "messages" && peek.Stream
	return body, peek, true
}

// readBody buffers the request body within the limit (retries replay it)
// and peeks at it while it arrives.
func (s *Server) readBody(r *http.Request, limit int64) (*requestBody, anthropic.Peek, *Error) {
	tooLarge := newError(http.StatusRequestEntityTooLarge, anthropic.RequestTooLarge,
		fmt.Sprintf("request body exceeds the proxy's limit of %d bytes (proxy.max_body_bytes)", limit))
	if r.ContentLength > limit {
		return nil, anthropic.Peek{}, tooLarge
	}
	var body *requestBody
	var peek anthropic.Peek
	var err error
	if r.ContentLength >= 0 {
		body = s.bodies.get(int(r.ContentLength))
		peek, err = anthropic.ReadAndPeek(r.Body, body.buf)
	} else {
		// Chunked upload: size unknown, so read it all, then peek.
		var buf []byte
		buf, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err == nil && int64(len(buf)) > limit {
			return nil, peek, tooLarge
		}
		if err != nil {
			err = &anthropic.ReadError{Err: err}
		} else {
			body = s.bodies.get(len(buf))
			copy(body.buf, buf)
			peek, err = anthropic.PeekRequest(body.buf)
		}
	}
	if err == nil {
		return body, peek, nil
	}
	if body != nil {
		body.release()
	}
	if anthropic.IsSyntaxError(err) {
		return nil, peek, newError(http.StatusBadRequest, anthropic.InvalidRequestError, "malformed JSON request body: "+err.Error())
	}
	return nil, peek, newError(statusClientClosed, "client_cancelled", err.Error())
}
