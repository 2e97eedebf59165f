package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
	"longhaul/proxy/sse"
)

// maxConversationReply bounds the reply a Responses client's conversation is kept with (for
// previous_response_id); a longer one is not kept.
const maxConversationReply = 8 << 20

// codec is how one attempt's reply reaches the client: as it came (raw: the client speaks
// the upstream's protocol), or decoded into Messages events and, for a client of another
// protocol, encoded into the client's. A raw foreign stream is still decoded, for the tap only.
type codec struct {
	c   *call
	up  upstreamProtocol
	uc  *upstreamCall
	raw bool
}

func newCodec(c *call, up upstreamProtocol, uc *upstreamCall) *codec {
	return &codec{c: c, up: up, uc: uc, raw: c.native(up)}
}

// clientWriteError marks a failed write to the client (it left), as opposed to a stream that
// could not be translated.
type clientWriteError struct{ err error }

func (e *clientWriteError) Error() string { return e.err.Error() }

// relayStream forwards an SSE reply event by event. Headers are committed only
// once the first event arrived, so an upstream that fails before it can still
// be retried elsewhere; after that, failures become an in-band error event.
func (s *Server) relayStream(ctx context.Context, w http.ResponseWriter, cfg *Config, ex *Exchange, c *call, cd *codec, resp *http.Response, deadline *time.Timer, body *requestBody) (*upstreamFailure, bool) {
	events, stop := readEvents(resp.Body)
	defer stop()

	first := <-events
	deadline.Stop()
	if first.err != nil {
		err := first.err
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		if errors.Is(err, io.EOF) {
			err = errors.New("upstream closed the stream before its first event")
		}
		return &upstreamFailure{err: err, up: cd.up}, false
	}
	if f := firstEventFailure(first.ev, resp.Header, cd.up); f != nil {
		return f, false // nothing reached the client: another account may answer
	}

	// Committed: no retry can need the request body any more, and a stream may
	// run for minutes, so let its buffer go now.
	if body != nil {
		body.release()
	}
	flusher := http.NewResponseController(w)
	// A Gemini client that asked for the JSON-array stream gets one even from a Gemini
	// upstream, which is always asked for SSE.
	raw := cd.raw && (c.proto.nativeKind() != pool.KindGemini || c.tr.geminiSSE)
	if raw {
		copyHeader(w.Header(), resp.Header)
		w.Header().Del("Content-Length")
	} else {
		w.Header().Set("Content-Type", c.proto.streamContentType(&c.tr))
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(resp.StatusCode)
	ex.Status = resp.StatusCode
	ex.rateLimit = pool.RateLimitHeaders(resp.Header)
	tap := streamTap{ex: ex}
	if cfg.CaptureBodies { // history: the reconstructed message, built as events pass
		tap.reply = anthropic.NewReplyBuilder(cfg.MaxCaptureBytes)
		defer tap.keepReply()
	}
	if c.tr.store != nil { // Responses: the conversation, for previous_response_id
		tap.conversation = anthropic.NewReplyBuilder(maxConversationReply)
		defer func() { c.replyMessages = tap.conversationReply() }()
	}
	write := func(frame []byte) error {
		if err := s.writeFlush(w, flusher, ex, frame); err != nil {
			return &clientWriteError{err}
		}
		return nil
	}
	var dec streamDecoder
	if raw || cd.up.kind() != pool.KindAnthropic {
		dec = cd.up.streamToMessages(cd.uc)
	}
	var enc streamEncoder
	if !raw {
		enc = c.proto.streamFromMessages(&c.tr)
	}
	// messagesEvent handles one event of the reply as Messages: the tap reads it, and unless
	// the client gets the upstream's bytes, it is written in the client's protocol.
	messagesEvent := func(name string, data, rawEvent []byte) error {
		tap.observe(name, data)
		switch {
		case enc != nil:
			return enc.Event(name, data, write)
		case raw && dec == nil && rawEvent != nil:
			return write(rawEvent)
		case raw && dec != nil:
			return nil // the caller wrote the upstream's event
		}
		return write(sse.AppendEvent(nil, name, data))
	}
	emit := func(name string, data []byte) error { return messagesEvent(name, data, nil) }
	feed := func(ev sse.Event) error {
		if dec == nil {
			return messagesEvent(ev.Name, ev.Data, ev.Raw)
		}
		if raw {
			if err := write(ev.Raw); err != nil {
				return err
			}
			if err := dec.Event(ev.Name, ev.Data, emit); err != nil {
				s.log.Debug("cannot read a relayed event for the record", "id", ex.ID, "err", err)
			}
			return nil
		}
		return dec.Event(ev.Name, ev.Data, emit)
	}
	end := streamEnd{raw: raw, dec: dec, enc: enc, emit: emit, write: write}
	keepAlive := time.NewTimer(cfg.KeepAlive)
	defer keepAlive.Stop()
	// An SSE comment would break a JSON-array stream.
	keepAlives := raw || c.proto.streamContentType(&c.tr) == "text/event-stream"

	// handle relays one read result; true means the stream is over. A
	// truncated last event is not forwarded: a client's SSE parser would merge
	// it with the error event that follows into one broken event.
	handle := func(res readResult) bool {
		if res.err == nil {
			err := feed(res.ev)
			if err == nil {
				return false
			}
			var cw *clientWriteError
			if errors.As(err, &cw) {
				ex.clientGone()
				return true
			}
			res.err = fmt.Errorf("cannot translate the upstream's stream: %w", err)
		}
		s.endStream(ctx, ex, c, &tap, &end, res.err)
		return true
	}
	if handle(first) {
		return nil, true
	}
	for {
		select {
		case res := <-events:
			if handle(res) {
				return nil, true
			}
			keepAlive.Reset(cfg.KeepAlive)
		case <-keepAlive.C:
			if keepAlives {
				if err := s.writeFlush(w, flusher, ex, sse.KeepAlive); err != nil {
					ex.clientGone()
					return nil, true
				}
			}
			keepAlive.Reset(cfg.KeepAlive)
		}
	}
}

// streamEnd finishes a stream's translations: the decoder says how the upstream's stream
// ended (as Messages events), the encoder closes the client's.
type streamEnd struct {
	raw   bool
	dec   streamDecoder
	enc   streamEncoder
	emit  func(name string, data []byte) error
	write func(frame []byte) error
}

// firstEventFailure reads a stream that opened with 200 and then, as its very first event,
// an error (some gateways, and Anthropic's own overloads once a stream has been accepted) as
// the failure it is, with the status its error type stands for, so the attempt loop can try
// another account before anything reached the client. The error's data is the same object an
// error reply's body carries: `event: error` with {"type":"error","error":{...}} for Messages
// and Responses, a bare {"error":{...}} data line for Chat and Gemini.
func firstEventFailure(ev sse.Event, header http.Header, up upstreamProtocol) *upstreamFailure {
	errObj := anthropic.MemberValue(ev.Data, "error")
	if ev.Name != "error" && (errObj == nil || anthropic.MemberValue(ev.Data, "choices") != nil ||
		anthropic.MemberValue(ev.Data, "candidates") != nil) {
		return nil
	}
	body := bytes.Clone(ev.Data)
	if errObj == nil { // Responses: {"type":"error","code":…,"message":…}, in OpenAI's error shape
		body = fmt.Appendf(nil, `{"error":{"message":%s,"type":"server_error","code":%s}}`,
			orJSONNull(anthropic.MemberValue(ev.Data, "message")), orJSONNull(anthropic.MemberValue(ev.Data, "code")))
		errObj = anthropic.MemberValue(body, "error")
	}
	if len(errObj) == 0 || errObj[0] != '{' {
		return nil
	}
	status := http.StatusBadGateway
	typ := anthropic.Unquote(anthropic.MemberValue(errObj, "type"))
	if typ == "" {
		typ = anthropic.Unquote(anthropic.MemberValue(errObj, "status")) // Gemini: "RESOURCE_EXHAUSTED"
	}
	switch typ {
	case anthropic.OverloadedError, "UNAVAILABLE":
		status = 529
	case anthropic.RateLimitError, "RESOURCE_EXHAUSTED", "rate_limit_exceeded":
		status = http.StatusTooManyRequests
	case anthropic.APIError, "server_error", "INTERNAL":
		status = http.StatusInternalServerError
	case anthropic.InvalidRequestError, "INVALID_ARGUMENT":
		status = http.StatusBadRequest
	}
	return &upstreamFailure{status: status, header: header, body: body, up: up}
}

func orJSONNull(v []byte) []byte {
	if len(v) == 0 {
		return []byte("null")
	}
	return v
}

type readResult struct {
	ev  sse.Event
	err error
}

// readEvents reads body's events on a goroutine of its own, which lets the
// relay write keep-alives while the upstream is idle; the last result
// carries the error that ended the stream. stop closes body, which ends the
// goroutine, and waits for it, so nothing reads body after stop returns.
func readEvents(body io.ReadCloser) (events <-chan readResult, stop func()) {
	ch := make(chan readResult)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		rd := sse.NewReader(body, 0)
		for {
			ev, err := rd.Next()
			select {
			case ch <- readResult{ev, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch, func() {
		close(done)
		body.Close() //nolint:errcheck // unblocks the reader goroutine
		<-exited
	}
}

func (s *Server) writeFlush(w http.ResponseWriter, rc *http.ResponseController, ex *Exchange, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	if ex.FirstByte.IsZero() {
		ex.FirstByte = s.now()
	}
	ex.BytesOut += int64(len(b))
	return rc.Flush()
}

// endStream classifies how a stream ended and, if the upstream failed, tells
// the client in-band (the status line is long gone), in its protocol.
func (s *Server) endStream(ctx context.Context, ex *Exchange, c *call, tap *streamTap, end *streamEnd, err error) {
	if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
		ex.clientGone()
		return
	}
	if end.dec != nil && errors.Is(err, io.EOF) {
		// The upstream's stream ended: its decoder turns how (finished or not) into Messages
		// events, message_stop or an error.
		if derr := end.dec.End(end.emit); derr != nil && !isClientWrite(derr) {
			err = fmt.Errorf("cannot translate the upstream's stream: %w", derr)
		}
	}
	switch {
	case errors.Is(err, io.EOF) && tap.facts.Stopped:
		ex.StreamOutcome = "complete"
		s.closeStream(ex, end)
		return
	case tap.upstreamError():
		ex.StreamOutcome = "upstream_error"
		s.closeStream(ex, end)
		return
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("upstream closed the stream before message_stop")
	}
	ex.StreamOutcome = "upstream_error"
	ex.ErrorType, ex.ErrorMessage = anthropic.APIError, "upstream stream failed: "+err.Error()
	s.log.Warn("upstream stream failed after the first byte", "id", ex.ID, "err", err)
	errEvent := anthropic.ErrorJSON(anthropic.APIError, ex.ErrorMessage)
	switch {
	case end.raw && end.dec != nil:
		// The client reads the upstream's protocol, its own: an error frame in it.
		name := ""
		if c.proto.nativeKind() == pool.KindOpenAIResponses {
			name = "error"
		}
		end.write(sse.AppendEvent(nil, name, c.proto.errorBody(newError(http.StatusBadGateway, anthropic.APIError, ex.ErrorMessage)))) //nolint:errcheck // nothing left to tell a gone client
	default:
		end.emit("error", errEvent) //nolint:errcheck // nothing left to tell a gone client
	}
	s.closeStream(ex, end)
}

// closeStream lets the client's encoder write what ends its stream.
func (s *Server) closeStream(ex *Exchange, end *streamEnd) {
	if end.enc == nil {
		return
	}
	if err := end.enc.End(end.write); err != nil && !isClientWrite(err) {
		s.log.Warn("cannot end the client's stream", "id", ex.ID, "err", err)
	}
}

func isClientWrite(err error) bool {
	var cw *clientWriteError
	return errors.As(err, &cw)
}

// streamTap reads what the monitor and the signature cache need from events
// already written to the client, and mirrors it onto the exchange as it
// grows, so the exchange is current whenever the relay stops.
type streamTap struct {
	ex    *Exchange
	facts anthropic.ReplyFacts
	reply *anthropic.ReplyBuilder // nil unless Config.CaptureBodies
	// conversation rebuilds the reply for a Responses client's stored conversation (nil
	// for other clients).
	conversation *anthropic.ReplyBuilder
}

func (t *streamTap) observe(name string, data []byte) {
	if t.reply != nil {
		t.reply.Add(name, data)
	}
	if t.conversation != nil {
		t.conversation.Add(name, data)
	}
	if t.facts.Event(name, data) {
		recordReply(t.ex, &t.facts)
	}
}

// conversationReply is the rebuilt reply, nil when it was cut or the stream did not finish.
func (t *streamTap) conversationReply() []byte {
	body, truncated := t.conversation.Bytes()
	if truncated || !t.facts.Stopped {
		return nil
	}
	return body
}

// upstreamError reports that the upstream's own error event was relayed.
func (t *streamTap) upstreamError() bool { return t.facts.Error != nil }

// recordReply copies a reply's facts onto the exchange. The slices are
// shared: the facts only append, and nothing else writes them. Repeating the
// copy after an error event is harmless, since nothing else writes the
// exchange's error while events still arrive.
func recordReply(ex *Exchange, f *anthropic.ReplyFacts) {
	ex.Usage, ex.StopReason = Usage(f.Usage), f.StopReason
	ex.Signatures, ex.ToolUseIDs, ex.ToolUseSignatures = f.Signatures, f.ToolUseIDs, f.ToolUseSignatures
	ex.ToolsCalled = f.ToolUseNames
	if f.Error != nil {
		ex.ErrorType, ex.ErrorMessage = f.Error.Type, f.Error.Message
	}
}

// maxTappedBody bounds the copy of a non-stream reply kept for accounting.
const maxTappedBody = 4 << 20

// maxTranslatedReply bounds a non-stream reply read whole for translation.
const maxTranslatedReply = 64 << 20

// relayBody forwards a non-stream reply: as it arrives when the client speaks the upstream's
// protocol, else read whole, translated and written. Either way its usage is read.
func (s *Server) relayBody(ctx context.Context, w http.ResponseWriter, cfg *Config, ex *Exchange, c *call, cd *codec, resp *http.Response) (*upstreamFailure, bool) {
	if !cd.raw {
		return s.translateBody(ctx, w, cfg, ex, c, cd, resp)
	}
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	ex.Status = resp.StatusCode
	ex.rateLimit = pool.RateLimitHeaders(resp.Header)
	ex.FirstByte = s.now()
	tapped := &capture{limit: maxTappedBody}
	sink, keepReply := captureReply(cfg, tapped)
	n, err := io.Copy(w, io.TeeReader(resp.Body, sink))
	keepReply(ex)
	ex.BytesOut = n
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			ex.clientGone()
		} else {
			ex.ErrorType, ex.ErrorMessage = anthropic.APIError, fmt.Sprintf("upstream reply interrupted: %v", err)
			ex.abort = true
		}
		return nil, true
	}
	if c.op == opGenerate && !tapped.truncated {
		messages := tapped.buf
		if cd.up.kind() != pool.KindAnthropic {
			if messages, err = cd.up.replyToMessages(tapped.buf, cd.uc); err != nil {
				s.log.Debug("cannot read a relayed reply for the record", "id", ex.ID, "err", err)
				return nil, true
			}
		}
		s.tapReply(ex, c, messages)
	}
	return nil, true
}

// tapReply reads a whole Messages reply's facts onto the exchange.
func (s *Server) tapReply(ex *Exchange, c *call, messages []byte) {
	var f anthropic.ReplyFacts
	if f.Body(messages) {
		recordReply(ex, &f)
	}
	if c.tr.store != nil {
		c.replyMessages = messages
	}
}

// translateBody reads a non-stream reply whole, translates it into the client's protocol
// and writes it. Nothing has reached the client before, so a reply that cannot be
// translated (or a Gemini reply its filters blocked) is answered as an error.
func (s *Server) translateBody(ctx context.Context, w http.ResponseWriter, cfg *Config, ex *Exchange, c *call, cd *codec, resp *http.Response) (*upstreamFailure, bool) {
	buf, err := io.ReadAll(io.LimitReader(resp.Body, maxTranslatedReply+1))
	if err != nil {
		if ctx.Err() != nil && context.Cause(ctx) == context.Canceled {
			ex.clientGone()
			return nil, true
		}
		return &upstreamFailure{err: fmt.Errorf("read upstream reply: %w", err), up: cd.up}, false
	}
	if len(buf) > maxTranslatedReply {
		return &upstreamFailure{err: fmt.Errorf("upstream reply exceeds %d bytes", maxTranslatedReply), up: cd.up}, false
	}
	ex.rateLimit = pool.RateLimitHeaders(resp.Header)
	messages, err := cd.up.replyToMessages(buf, cd.uc)
	var out []byte
	if err == nil {
		if c.op == opGenerate {
			s.tapReply(ex, c, messages)
		}
		out, err = c.proto.replyFromMessages(messages, &c.tr)
	}
	if err != nil {
		e := upstreamTranslationError(err)
		e.Message = "cannot translate the upstream's reply: " + strings.TrimPrefix(e.Message, "the chosen upstream cannot take this request: ")
		if e.Status < 400 {
			e.Status = http.StatusBadGateway
		}
		ex.Status = e.Status
		ex.ErrorType, ex.ErrorMessage = e.Type, e.Message
		writeErrorAs(w, c.proto, e)
		return nil, true
	}
	w.Header().Set("Content-Type", "application/json")
	// Its length, as a relayed reply has the upstream's: never chunked, however large.
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(resp.StatusCode)
	ex.Status = resp.StatusCode
	ex.FirstByte = s.now()
	n, err := w.Write(out)
	ex.BytesOut = int64(n)
	if err != nil {
		ex.clientGone()
	}
	if cfg.CaptureBodies {
		ex.ReplyBody = captureBytes(out, cfg.MaxCaptureBytes, &ex.BodiesTruncated)
	}
	return nil, true
}
