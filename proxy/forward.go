package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/gemini"
	"longhaul/proxy/openai"
	"longhaul/proxy/pool"
)

// statusClientClosed records a client that hung up (nginx's convention).
const statusClientClosed = 499

// maxErrorBody bounds how much of an upstream error reply is held for
// passing on after a failed retry.
const maxErrorBody = 1 << 20

// op is what an API request asks of the upstream.
type op int

const (
	opGenerate op = iota // a model reply: Messages, Chat, Responses, generateContent
	opCount              // a token count: count_tokens, countTokens
)

// call is one API request's protocol facts: the client's protocol, what it asks, and what
// its translation needs on the way back.
type call struct {
	proto clientProtocol
	op    op
	route string // Exchange.Route
	tr    translation
	// messages is the request as a Messages body before compaction (the client's own bytes
	// for an Anthropic client).
	messages []byte
	// replyMessages is the reply as a Messages body, once known (Responses keeps the
	// conversation for previous_response_id from it).
	replyMessages []byte
	// session is the session read from a client's own body (another protocol's); limit the
	// context window when the request was screened without translating it, screenedFor what
	// it was screened for.
	session     string
	limit       int
	screenedFor target
	// tools and toolBytes are the tool definitions' count and size in the client's own body.
	tools, toolBytes int
	// lazy is the Messages translation of a request screened without it, made when an
	// account of another protocol takes it (at most once per request).
	lazy     *requestBody
	lazyPeek anthropic.Peek
	// replay is set when the request is a replay (Server.Replay).
	replay *Replay
	// early is the request sent while its body arrived, until an attempt takes it or it is
	// abandoned; turn what the recall keeps of this request for the session's next turn
	// (early.go).
	early *earlySend
	turn  *turnNote
	// memory is the request's share of the memory budget (budget.go), given back when the
	// handler returns.
	memory reservation
}

// native reports whether an upstream speaks the client's protocol itself.
func (c *call) native(up upstreamProtocol) bool { return up.kind() == c.proto.nativeKind() }

// forward runs one API request: read the body and translate it into Messages when the
// client speaks another protocol, compact it when it needs it, try accounts until one answers
// or attempts run out, relay the answer (translated back when needed), record the exchange.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, cfg *Config, comp *compactor, c *call) {
	ex := &Exchange{
		ID: newExchangeID(), State: ExchangeStarted, Route: c.route, Method: r.Method, Path: r.URL.Path,
		UserAgent: r.UserAgent(), RemoteAddr: r.RemoteAddr, Start: s.now(), ClientProtocol: c.proto.name(),
		ClientHeaders: clientHeaders(r.Header),
	}
	if c.replay != nil {
		ex.ReplayOf = c.replay.Of
	}
	w.Header().Set("Longhaul-Request-Id", ex.ID)
	c.memory = s.budget.open(cfg.MemoryBudgetBytes, c.proto)
	defer c.memory.release()             // last: after every buffer below is let go
	defer func() { c.early.abandon() }() // a send no attempt took
	body, messages, peek, ok := s.inbound(w, r, cfg, comp, ex, c)
	if !ok {
		return
	}
	defer body.release()
	if messages != nil && messages != body {
		defer messages.release()
	}
	defer func() {
		if c.lazy != nil {
			c.lazy.release()
		}
	}()
	s.observer.Observe(*ex)

	out, e := s.prepare(r, cfg, comp, ex, c, body, messages, peek)
	if e != nil {
		s.finish(ex, e.Status, e)
		writeErrorAs(w, c.proto, e)
		return
	}
	if cfg.CaptureBodies || out.compacted.Changed {
		ex.keepRequestBody(body, cfg.MaxCaptureBytes)
	}
	last, answered := s.tryAccounts(w, r, cfg, comp, ex, c, body, out)
	if answered {
		return
	}
	if c.op == opCount && comp != nil && (last == nil || countUnsupported(last)) {
		s.countLocally(w, comp, ex, c, messages.buf)
		return
	}
	s.passOn(w, cfg, ex, c, last)
}

// outbound is what every attempt of one request sends.
type outbound struct {
	// body is the request as Messages: the client's bytes for an Anthropic client, their
	// translation for another, or the compacted rewrite of either (a new buffer; the client's
	// is never modified).
	body      *requestBody
	modelSpan anthropic.Span // where the model name is in body, for the model map
	compacted compact.Result
	screened  bool // the screen looked at it: pressure can be read from the reply's usage
	// source is the request as Messages before compaction, and peek what the peek found in it
	// (nil while a request screened on the client's own body has not been translated); target
	// what body was compacted for.
	source *requestBody
	peek   anthropic.Peek
	target target
	// compactable: the engine runs on this request (a model reply with compaction on).
	compactable bool
	// sizeBytes and sizeHeader are, for a Messages request the screen let through unparsed,
	// its size and the calibrator's hash of its system and tools: the reply's real count
	// anchors the session's next estimate on them.
	sizeBytes  int
	sizeHeader uint64
	// cacheTTL is how long the upstream keeps the prompt cache the request writes.
	cacheTTL time.Duration
}

// tryAccounts is the attempt loop. It reports answered when the client has
// its answer (a reply relayed, no account to try, or the client gone);
// otherwise last is the upstream failure to pass on (nil: a count no account of the client's
// protocol can answer, for the local estimate).
func (s *Server) tryAccounts(w http.ResponseWriter, r *http.Request, cfg *Config, comp *compactor, ex *Exchange, c *call, client *requestBody, out outbound) (last *upstreamFailure, answered bool) {
	var exclude []int64
	pick := pool.Pick{Model: ex.Model, SessionID: ex.SessionID, ModelMap: cfg.ModelMap}
	if c.replay != nil {
		// A replay neither follows nor moves the session's account (affinity).
		pick.SessionID, pick.Only = "", c.replay.AccountID
	}
	if c.op == opCount {
		// Only an upstream of the client's own protocol counts tokens; any other is
		// answered from the estimator.
		pick.Kinds = []string{c.proto.nativeKind()}
	}
	betas := compact.ParseBetas(r.Header.Values("Anthropic-Beta"))
	only, windowRetried, extra := pick.Only, false, 0
	for attempt := 0; attempt < cfg.MaxAttempts+extra; attempt++ {
		pick.Exclude = exclude
		acct, err := s.pool.Pick(pick, s.now())
		pick.Only = only
		if err != nil {
			if last != nil {
				return last, false // pass on the last upstream failure: it says more than "no account"
			}
			var na *pool.NoAccountError
			if c.op == opCount && errors.As(err, &na) && na.Unserved {
				return nil, false
			}
			s.refuseNoAccount(w, ex, c, err)
			return nil, true
		}
		up := upstreamFor(acct.KindOf())
		att := Attempt{AccountID: acct.ID, AccountName: acct.Name(), Start: s.now()}
		uc := &upstreamCall{route: "messages", stream: ex.Stream, model: ex.Model, baseURL: acct.BaseURL}
		if c.op == opCount {
			uc.route = "count_tokens"
		}
		if model, ok := pool.MapModel(cfg.ModelMap, ex.Model, acct); ok {
			uc.model = model
		}
		ex.ModelSent, ex.UpstreamProtocol = uc.model, up.kind()
		var e *Error
		if out.compactable {
			// Compacted for the model this account is sent and the window it has.
			out, e = s.retarget(r, cfg, comp, ex, c, client, out, comp.target(uc.model, acct.ID, betas, s.windows))
			if e == nil && out.compacted.Changed {
				ex.keepRequestBody(client, cfg.MaxCaptureBytes)
			}
		}
		var sendBody *requestBody
		var translated bool
		if e == nil {
			sendBody, translated, e = s.upstreamBody(r, comp, ex, c, client, out, up, uc)
		}
		if e != nil {
			att.Error = e.Message
			ex.Attempts = append(ex.Attempts, att)
			s.finish(ex, e.Status, e)
			writeErrorAs(w, c.proto, e)
			return nil, true
		}
		ex.noteAttempt(c.proto, up.kind(), translated)
		sentBytes := len(sendBody.buf) // for a window learned from a refusal; the buffer may go below
		if sendBody != client && (cfg.CaptureBodies || out.compacted.Changed) {
			// What went upstream, byte for byte, whatever produced it (the model map, a
			// translation, compaction); the last attempt's is the one kept.
			ex.ForwardedBody = captureBytes(sendBody.buf, cfg.MaxCaptureBytes, &ex.BodiesTruncated)
		}
		asIs := sendBody == client && c.native(up)
		if asIs && c.turn != nil {
			c.turn.asIs.Store(true)
		}
		var early *earlySend
		if c.early.take(acct, asIs) {
			early = c.early
		}
		fail, committed := s.attempt(w, r, cfg, ex, c, acct, up, uc, sendBody, early)
		if sendBody != out.body && sendBody != client && sendBody != c.lazy {
			sendBody.release()
		}
		att.Duration = s.now().Sub(att.Start)
		if committed || fail == nil {
			att.Status = ex.Status
			ex.Attempts = append(ex.Attempts, att)
			s.answered(ex, acct, comp, c, out)
			return nil, true
		}
		att.Status, att.Error = fail.status, fail.message()
		ex.Attempts = append(ex.Attempts, att)
		if r.Context().Err() != nil {
			// The client left; the attempt says nothing about the account.
			s.finish(ex, statusClientClosed, newError(statusClientClosed, "client_cancelled", "client closed the request"))
			return nil, true
		}
		if window, ok := fail.tooLong(); ok && out.compactable && !windowRetried {
			// The upstream's window is smaller than the one assumed: learn it, compact to it
			// and try the same account once more. Nothing reached the client yet.
			if window <= 0 {
				window = windowFromRefusal(ex, sentBytes)
			}
			s.windows.learn(acct.ID, uc.model, window, s.now())
			s.log.Info("upstream refused the request as too long; its window is learned", "id", ex.ID,
				"account", acct.Name(), "model", uc.model, "window", window)
			windowRetried, extra, pick.Only = true, extra+1, acct.ID
			continue
		}
		outcome := fail.classify(int(ex.BytesIn), s.now())
		cooldown := s.pool.Report(acct.ID, uc.model, outcome, s.now())
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

// upstreamBody is what one attempt sends: the client's own bytes when the upstream speaks
// the client's protocol and nothing was rewritten (only the model renamed in place, if the
// model map says so), else the Messages request translated for the upstream.
func (s *Server) upstreamBody(r *http.Request, comp *compactor, ex *Exchange, c *call, client *requestBody, out outbound, up upstreamProtocol, uc *upstreamCall) (send *requestBody, translated bool, e *Error) {
	if c.native(up) && !out.compacted.Changed {
		if uc.model == c.tr.model || uc.model == "" {
			return client, false, nil
		}
		if span, ok := c.modelSpan(client.buf, out); ok {
			return staticBody(anthropic.WithModel(client.buf, span, uc.model)), false, nil
		}
		return client, false, nil // Gemini: the model is in the URL
	}
	if out.body == nil { // screened without translating: an account of another protocol took it
		if c.lazy == nil {
			b, peek, e := s.translateInbound(r, c, client)
			if e != nil {
				return nil, false, e
			}
			c.lazy, c.lazyPeek, c.messages = b, peek, b.buf
		}
		out.body, out.modelSpan = c.lazy, c.lazyPeek.ModelSpan
	}
	messages := out.body.buf
	if uc.model != c.tr.model && out.modelSpan.End > 0 {
		messages = anthropic.WithModel(messages, out.modelSpan, uc.model)
	}
	if c.proto.nativeKind() == pool.KindGemini {
		uc.client = c.tr.client
	}
	uc.translated = c.proto.nativeKind() != pool.KindAnthropic
	if comp != nil && comp.sigs != nil {
		uc.sigs = comp.sigs
	}
	body, err := up.fromMessages(messages, uc)
	if err != nil {
		s.log.Warn("cannot translate the request for the upstream", "kind", up.kind(), "err", err)
		return nil, false, upstreamTranslationError(err)
	}
	if len(body) > 0 && len(body) == len(out.body.buf) && &body[0] == &out.body.buf[0] {
		return out.body, false, nil // the Messages request itself, untouched
	}
	return staticBody(body), true, nil
}

// upstreamTranslationError is a request the upstream's protocol cannot express (a built-in
// tool, a content type it lacks): the client's request, in the client's terms.
func upstreamTranslationError(err error) *Error {
	e := openAIRequestError(err)
	var ge *gemini.Error
	if errors.As(err, &ge) {
		e = geminiRequestError(err)
	}
	e.Message = "the chosen upstream cannot take this request: " + e.Message
	return e
}

// modelSpan is where the model is named in the client's own body: for the Messages shape the
// peek found it; for OpenAI's it is the top-level "model" member; for Gemini it is not in the
// body at all.
func (c *call) modelSpan(body []byte, out outbound) (anthropic.Span, bool) {
	switch c.proto.nativeKind() {
	case pool.KindAnthropic:
		return out.modelSpan, out.modelSpan.End > 0
	case pool.KindGemini:
		return anthropic.Span{}, false
	}
	return anthropic.MemberSpan(body, "model")
}

// refuseNoAccount answers 503 when the pool has no account to try, saying why
// (and until when, as Retry-After, when all are cooling down); 404 when no account serves
// the model at all.
func (s *Server) refuseNoAccount(w http.ResponseWriter, ex *Exchange, c *call, err error) {
	e := newError(http.StatusServiceUnavailable, anthropic.OverloadedError, err.Error())
	var na *pool.NoAccountError
	if errors.As(err, &na) {
		e.RetryAfter = na.RetryAfter
		if na.Unserved {
			e = newError(http.StatusNotFound, anthropic.NotFoundError, err.Error())
			e.Code, e.Param = openai.CodeModelNotFound, "model"
		}
	}
	s.finish(ex, e.Status, e)
	writeErrorAs(w, c.proto, e)
}

// answered records an attempt whose reply reached the client, teaches the
// pool and the estimator what it showed, and aborts the connection if the
// relay was cut short.
func (s *Server) answered(ex *Exchange, acct pool.Account, comp *compactor, c *call, out outbound) {
	if out.screened {
		ex.pressureFromUsage()
	}
	s.finish(ex, ex.Status, nil)
	s.pool.Report(acct.ID, ex.ModelSent, ex.outcome(), s.now())
	if comp != nil && c.op == opGenerate && c.replay == nil { // a replay teaches nothing
		s.learn(comp, out, ex)
	}
	if c.tr.store != nil && c.replay == nil && ex.Status >= 200 && ex.Status < 300 && c.replyMessages != nil {
		c.keepConversation()
	}
	if ex.abort {
		// Abort the connection so the client sees a truncated reply, not a complete one.
		panic(http.ErrAbortHandler)
	}
}

// keepConversation stores a Responses exchange's conversation under the id the client saw, so
// a later previous_response_id can name it. That id is resp_<tail> of the Messages reply's
// msg_<tail> both when the reply was translated (openai.ResponsesReplyOptions) and when a
// Responses upstream's reply was relayed (its decoder names the message after the response).
func (c *call) keepConversation() {
	_, tail, _ := strings.Cut(anthropic.Unquote(anthropic.MemberValue(c.replyMessages, "id")), "_")
	if tail == "" {
		return
	}
	conv, err := openai.ResponsesConversationAfter(c.messages, c.replyMessages)
	if err == nil {
		c.tr.store.Put(responsesStorePartition, "resp_"+tail, conv)
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

// countLocally answers a token count from the calibrated estimator, in the
// client's own shape, when no upstream can count.
func (s *Server) countLocally(w http.ResponseWriter, comp *compactor, ex *Exchange, c *call, body []byte) {
	n, err := comp.pipe.Count(body, ex.Model, ex.SessionID)
	if err != nil {
		e := newError(http.StatusBadRequest, anthropic.InvalidRequestError, "cannot count tokens: "+err.Error())
		s.finish(ex, e.Status, e)
		writeErrorAs(w, c.proto, e)
		return
	}
	reply := []byte(fmt.Sprintf(`{"input_tokens":%d}`, n))
	if c.proto.nativeKind() == pool.KindGemini {
		if reply, err = gemini.CountTokensReply(reply); err != nil {
			e := newError(http.StatusInternalServerError, anthropic.APIError, "cannot write the count: "+err.Error())
			s.finish(ex, e.Status, e)
			writeErrorAs(w, c.proto, e)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Longhaul-Token-Count", "estimated")
	w.WriteHeader(http.StatusOK)
	w.Write(reply) //nolint:errcheck // client gone
	ex.ErrorType, ex.ErrorMessage = "", ""
	ex.TokensBefore, ex.TokensAfter = n, n
	s.finish(ex, http.StatusOK, nil)
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
// the upstream speaks the client's protocol, the same error in the client's shape when it
// does not, 502 when it could not be reached.
func (s *Server) passOn(w http.ResponseWriter, cfg *Config, ex *Exchange, c *call, f *upstreamFailure) {
	var redirect *redirectRefused
	if errors.As(f.err, &redirect) { // never relayed: its Location would take the client's key there (redirect.go)
		e := newError(http.StatusBadGateway, anthropic.APIError, f.message())
		s.finish(ex, e.Status, e)
		writeErrorAs(w, c.proto, e)
		return
	}
	if f.status == 0 {
		e := newError(http.StatusBadGateway, anthropic.APIError, "upstream unreachable: "+f.message())
		if errors.Is(f.err, errFirstEventTimeout) {
			e = newError(http.StatusGatewayTimeout, anthropic.TimeoutError, f.message())
		}
		s.finish(ex, e.Status, e)
		writeErrorAs(w, c.proto, e)
		return
	}
	ex.ErrorType, ex.ErrorMessage = f.errorType(), f.message()
	if cfg.CaptureBodies {
		ex.ReplyBody = captureBytes(f.body, cfg.MaxCaptureBytes, &ex.BodiesTruncated)
	}
	if !c.native(f.up) {
		e := newError(f.status, f.errorType(), f.message())
		if ra := f.header.Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		s.finish(ex, f.status, nil)
		writeErrorAs(w, c.proto, e)
		return
	}
	copyHeader(w.Header(), f.header)
	w.Header().Del("Content-Length")
	w.WriteHeader(f.status)
	w.Write(f.body) //nolint:errcheck // client gone
	s.finish(ex, f.status, nil)
}

// upstreamFailure is an attempt that failed before anything reached the client.
type upstreamFailure struct {
	status int // 0: no response (connection error, timeout, empty stream)
	header http.Header
	body   []byte
	err    error            // the failure when it is not an upstream's error body (a redirect: its status too)
	up     upstreamProtocol // who answered, to read body
}

func (f *upstreamFailure) errorType() string {
	if f.status == 0 || f.err != nil {
		return anthropic.APIError
	}
	typ, _ := f.up.errorToMessages(f.status, f.body)
	if typ == "" {
		return http.StatusText(f.status)
	}
	return typ
}

func (f *upstreamFailure) message() string {
	if f.err != nil {
		return f.err.Error()
	}
	_, msg := f.up.errorToMessages(f.status, f.body)
	if msg == "" {
		return fmt.Sprintf("upstream answered %d", f.status)
	}
	return msg
}

// classify is what the failure means for the account (pool.Classify on the error read as a
// Messages one; a Gemini quota error's retryDelay when no header says how long to wait).
func (f *upstreamFailure) classify(requestBytes int, now time.Time) pool.Outcome {
	body := f.body
	if f.status != 0 && f.up.kind() != pool.KindAnthropic {
		body = anthropic.ErrorJSON(f.errorType(), f.message())
	}
	o := pool.Classify(f.status, f.header, body, requestBytes, now)
	if o.RetryAfter == 0 && o.Kind == pool.OutcomeRateLimited {
		o.RetryAfter = f.up.retryDelay(f.body)
	}
	return o
}

var errFirstEventTimeout = errors.New("upstream sent no response in time")

// attempt sends the request to one account. It returns a failure when nothing
// was written to the client (so another account may be tried); committed
// reports that the response started, after which errors go in-band.
//
// early, when not nil, is this request already sent to acct while its body arrived
// (early.go): its reply is the attempt's.
func (s *Server) attempt(w http.ResponseWriter, r *http.Request, cfg *Config, ex *Exchange, c *call, acct pool.Account, up upstreamProtocol, uc *upstreamCall, body *requestBody, early *earlySend) (fail *upstreamFailure, committed bool) {
	var ctx context.Context
	var cancel context.CancelCauseFunc
	var deadline *time.Timer
	var resp *http.Response
	var err error
	if early != nil {
		ctx, cancel, deadline = early.ctx, early.cancel, early.deadline
		resp, err = early.wait()
	} else {
		ctx, cancel = context.WithCancelCause(r.Context())
		// The timeout covers the wait for the first event of a stream, or the
		// whole of a non-stream reply; a healthy long stream is never cut.
		deadline = time.AfterFunc(cfg.RequestTimeout, func() { cancel(errFirstEventTimeout) })
		var out *http.Request
		if out, err = outboundRequest(ctx, r, c, acct, up, uc, body); err != nil {
			cancel(nil)
			deadline.Stop()
			return &upstreamFailure{err: err, up: up}, false
		}
		resp, err = s.transport.RoundTrip(out)
	}
	defer cancel(nil)
	defer deadline.Stop()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && r.Context().Err() == nil {
			err = cause
		}
		return &upstreamFailure{err: err, up: up}, false
	}
	defer resp.Body.Close()
	if isRedirect(resp.StatusCode) {
		return redirectFailure(resp, up), false
	}
	if resp.StatusCode >= 400 {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil && len(b) == 0 {
			return &upstreamFailure{err: fmt.Errorf("read upstream %d reply: %w", resp.StatusCode, err), up: up}, false
		}
		return &upstreamFailure{status: resp.StatusCode, header: resp.Header, body: b, up: up}, false
	}
	codec := newCodec(c, up, uc)
	if isEventStream(resp.Header) {
		return s.relayStream(ctx, w, cfg, ex, c, codec, resp, deadline, body)
	}
	return s.relayBody(ctx, w, cfg, ex, c, codec, resp)
}

// outboundRequest builds the upstream request from the buffered body (none when body is nil:
// the caller sets it); the inbound request is never modified, so a retry can build it again.
func outboundRequest(ctx context.Context, in *http.Request, c *call, acct pool.Account, up upstreamProtocol, uc *upstreamCall, body *requestBody) (*http.Request, error) {
	// Only allow-listed headers go upstream (forwardHeaders): the common ones, and the
	// client protocol's own only to an upstream of that protocol. The client's key is
	// replaced by the account's.
	allow := func(string) bool { return false }
	if c.native(up) {
		allow = c.proto.forwardHeader
		if c.proto.nativeKind() == pool.KindAnthropic {
			uc.path = in.URL.Path
			if in.URL.RawQuery != "" {
				uc.path += "?" + in.URL.RawQuery
			}
		}
	}
	h := forwardHeaders(in.Header, allow)
	if !c.native(up) {
		h.Del("Accept") // the client's Accept is for its protocol's reply, not this one's
	}
	out, err := up.newRequest(ctx, acct, uc, h, nil)
	if err != nil || body == nil {
		return out, err
	}
	attachBody(out, body)
	return out, nil
}

// attachBody makes body the outbound request's. GetBody lets the Transport replay it on a
// stale keep-alive connection.
func attachBody(out *http.Request, body *requestBody) {
	out.ContentLength = int64(len(body.buf))
	if len(body.buf) <= inlineBody {
		// A copy in a reader net/http knows to be in memory goes out in one write with the
		// headers; the pooled buffer's reader would have them flushed first, alone.
		inline := bytes.Clone(body.buf)
		out.Body = io.NopCloser(bytes.NewReader(inline))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(inline)), nil }
		return
	}
	out.Body = body.reader()
	out.GetBody = func() (io.ReadCloser, error) { return body.reader(), nil }
}

// inlineBody is the largest request body sent in one write with its headers: what fits
// beside them in the transport's 4 KiB write buffer. A small request then costs the upstream
// connection one write call, not two (docs/performance.md, "Fifth pass").
const inlineBody = 3 << 10
