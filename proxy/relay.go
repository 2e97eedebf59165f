package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/pool"
	"longhaul/proxy/sse"
)

// relayStream forwards an SSE reply event by event. Headers are committed only
// once the first event arrived, so an upstream that fails before it can still
// be retried elsewhere; after that, failures become an in-band error event.
func (s *Server) relayStream(ctx context.Context, w http.ResponseWriter, cfg *Config, ex *Exchange, resp *http.Response, deadline *time.Timer, body *requestBody) (*upstreamFailure, bool) {
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
		return &upstreamFailure{err: err}, false
	}

	// Committed: no retry can need the request body any more, and a stream may
	// run for minutes, so let its buffer go now.
	if body != nil {
		body.release()
	}
	flusher := http.NewResponseController(w)
	copyHeader(w.Header(), resp.Header)
	w.Header().Del("Content-Length")
	w.WriteHeader(resp.StatusCode)
	ex.Status = resp.StatusCode
	ex.rateLimit = pool.RateLimitHeaders(resp.Header)
	tap := streamTap{ex: ex}
	if cfg.CaptureBodies { // history: the reconstructed message, built as events pass
		tap.reply = anthropic.NewReplyBuilder(cfg.MaxCaptureBytes)
		defer tap.keepReply()
	}
	keepAlive := time.NewTimer(cfg.KeepAlive)
	defer keepAlive.Stop()

	// handle relays one read result; true means the stream is over. A
	// truncated last event is not forwarded: a client's SSE parser would merge
	// it with the error event that follows into one broken event.
	handle := func(res readResult) bool {
		if res.err == nil {
			if err := s.writeFlush(w, flusher, ex, res.ev.Raw); err != nil {
				ex.clientGone()
				return true
			}
			tap.observe(res.ev)
			return false
		}
		s.endStream(w, flusher, ctx, ex, &tap, res.err)
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
			if err := s.writeFlush(w, flusher, ex, sse.KeepAlive); err != nil {
				ex.clientGone()
				return nil, true
			}
			keepAlive.Reset(cfg.KeepAlive)
		}
	}
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
// the client in-band (the status line is long gone).
func (s *Server) endStream(w http.ResponseWriter, rc *http.ResponseController, ctx context.Context, ex *Exchange, tap *streamTap, err error) {
	switch {
	case ctx.Err() != nil && context.Cause(ctx) == context.Canceled:
		ex.clientGone()
		return
	case errors.Is(err, io.EOF) && tap.facts.Stopped:
		ex.StreamOutcome = "complete"
		return
	case tap.upstreamError():
		ex.StreamOutcome = "upstream_error"
		return
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("upstream closed the stream before message_stop")
	}
	ex.StreamOutcome = "upstream_error"
	ex.ErrorType, ex.ErrorMessage = anthropic.APIError, "upstream stream failed: "+err.Error()
	s.log.Warn("upstream stream failed after the first byte", "id", ex.ID, "err", err)
	s.writeFlush(w, rc, ex, sse.AppendEvent(nil, "error", anthropic.ErrorJSON(anthropic.APIError, ex.ErrorMessage))) //nolint:errcheck // nothing left to tell a gone client
}

// streamTap reads what the monitor and the signature cache need from events
// already written to the client, and mirrors it onto the exchange as it
// grows, so the exchange is current whenever the relay stops.
type streamTap struct {
	ex    *Exchange
	facts anthropic.ReplyFacts
	reply *anthropic.ReplyBuilder // nil unless Config.CaptureBodies
}

func (t *streamTap) observe(ev sse.Event) {
	if t.reply != nil {
		t.reply.Add(ev.Name, ev.Data)
	}
	if t.facts.Event(ev.Name, ev.Data) {
		recordReply(t.ex, &t.facts)
	}
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
	if f.Error != nil {
		ex.ErrorType, ex.ErrorMessage = f.Error.Type, f.Error.Message
	}
}

// maxTappedBody bounds the copy of a non-stream reply kept for accounting.
const maxTappedBody = 4 << 20

// relayBody forwards a non-stream reply as it arrives and reads its usage.
func (s *Server) relayBody(ctx context.Context, w http.ResponseWriter, cfg *Config, ex *Exchange, resp *http.Response) (*upstreamFailure, bool) {
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
	if ex.Route == "messages" && !tapped.truncated {
		var f anthropic.ReplyFacts
		if f.Body(tapped.buf) {
			recordReply(ex, &f)
		}
	}
	return nil, true
}
