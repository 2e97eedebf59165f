package proxy

import (
	"bytes"
	"net/http"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
)

// The compaction stage of a request: what the attempts send, compacted for the model and window
// of the account each goes to.

// prepare runs the compaction stage on a request for a model reply and returns what the
// attempts send.
func (s *Server) prepare(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, c *call, client, messages *requestBody, peek anthropic.Peek) (outbound, *Error) {
	out := outbound{body: messages, modelSpan: peek.ModelSpan, source: messages, peek: peek,
		compactable: c.op == opGenerate && comp != nil}
	if messages == nil { // screened on the client's own body (clientpeek.go)
		out.screened, out.target = true, c.screenedFor
		ex.ContextLimit, ex.ContextLimitSource = c.limit, c.screenedFor.window.Source
		return out, nil
	}
	if !out.compactable {
		return out, nil
	}
	tg := s.guessTarget(cfg, comp, ex.Model, ex.SessionID, compact.ParseBetas(r.Header.Values("Anthropic-Beta")))
	return s.compactFor(r, cfg, comp, ex, client, out, tg)
}

// compactFor compacts the request for tg: the first time with the target guessed before an
// account was picked, again when an attempt's account or model calls for another window or
// thinking support. Each run starts from the request as received (out.source): compacting a
// compacted request twice would not give the bytes the next request's compaction gives, and
// prompt caching needs those to match.
func (s *Server) compactFor(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, client *requestBody, out outbound, tg target) (outbound, *Error) {
	ex.Compaction, ex.SignatureRecoveries, ex.CrossModelDropped = nil, 0, 0
	out.target = tg
	var e *Error
	out.body, out.compacted, out.screened, e = s.compactStage(r, cfg, comp, ex, client, out.source, out.peek, tg)
	if e != nil {
		return out, e
	}
	out.modelSpan, out.sizeBytes, out.cacheTTL = out.peek.ModelSpan, 0, cacheTTL(out.source.buf, out.peek)
	if out.screened && out.peek.Messages.Images == 0 { // images count by their pixels, not their bytes
		src := out.source.buf
		out.sizeBytes, out.sizeHeader = len(src), comp.calibrator.HeaderHash(out.peek.SystemSpan.Of(src), out.peek.ToolsSpan.Of(src))
	}
	if out.compacted.Changed {
		out.modelSpan = anthropic.Span{} // where the model is in the rewrite
		if p, err := anthropic.PeekRequest(out.body.buf); err == nil {
			out.modelSpan = p.ModelSpan
		}
	}
	return out, nil
}

// retarget makes out fit tg, an attempt's target: compacted again when it differs from what out
// was compacted (or screened) for. A request screened on the client's own body is translated
// first.
func (s *Server) retarget(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, c *call, client *requestBody, out outbound, tg target) (outbound, *Error) {
	if !out.compactable || tg == out.target {
		return out, nil
	}
	if out.source == nil {
		if c.lazy == nil {
			b, peek, e := s.translateInbound(r, c, client)
			if e != nil {
				return out, e
			}
			c.lazy, c.lazyPeek, c.messages = b, peek, b.buf
		}
		out.source, out.peek = c.lazy, c.lazyPeek
	}
	return s.compactFor(r, cfg, comp, ex, client, out, tg)
}

// cacheTTL reads the TTL of the prompt cache a Messages request writes: an hour when a
// cache_control breakpoint asks for "1h", else 5 minutes. Breakpoints sit on the system prompt,
// the tools and the last messages (the prefix to cache ends there), so only those are read,
// not the whole body.
func cacheTTL(body []byte, p anthropic.Peek) time.Duration {
	tail := body[max(0, len(body)-cacheTTLTail):]
	for _, part := range [][]byte{p.SystemSpan.Of(body), p.ToolsSpan.Of(body), tail} {
		if holdsOneHour(part) && bytes.Contains(part, []byte(`"ttl"`)) {
			return compact.LongCacheTTL
		}
	}
	return compact.DefaultCacheTTL
}

// holdsOneHour reports whether b holds the JSON string "1h". It looks for `1h"`, then at the
// byte before: a search led by '"', JSON's commonest byte, stops at nearly every string, and
// read a Claude Code request's system prompt and tools at under 2 GB/s (25 µs a request,
// every request); one led by '1' takes 2 µs (BenchmarkCacheTTL).
func holdsOneHour(b []byte) bool {
	for i := 0; ; i += 3 {
		j := bytes.Index(b[i:], []byte(`1h"`))
		if j < 0 {
			return false
		}
		if i += j; i > 0 && b[i-1] == '"' {
			return true
		}
	}
}

// compactStage screens a request for a model reply (as Messages) and, unless the screen
// shows the engine would leave it alone, runs the compaction pipeline on it. It returns the
// body to send (messages itself when nothing changed).
func (s *Server) compactStage(r *http.Request, cfg *Config, comp *compactor, ex *Exchange, client, messages *requestBody, peek anthropic.Peek, tg target) (*requestBody, compact.Result, bool, *Error) {
	betas := compact.ParseBetas(r.Header.Values("Anthropic-Beta"))
	limit, screened := comp.untouched(peek, messages.buf, tg, ex.SessionID)
	ex.ContextLimit, ex.ContextLimitSource = limit, tg.window.Source
	if screened {
		return messages, compact.Result{}, true, nil
	}
	res, e := s.compactRequest(r.Context(), comp, ex, messages.buf, peek.Messages, betas, tg)
	if e != nil {
		ex.keepRequestBody(client, cfg.MaxCaptureBytes) // the original, for the record
		return messages, res, false, e
	}
	if !res.Changed {
		return messages, res, false, nil
	}
	return staticBody(res.Body), res, false, nil
}

const cacheTTLTail = 16 << 10
