package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
	"longhaul/proxy/sigcache"
)

// Compaction defaults the proxy adds to compact's.
const (
	DefaultSummaryModel       = "claude-haiku-4-5"
	defaultSignatureCacheSize = sigcache.DefaultMaxSize
)

// compactor is the compaction pipeline built for one CompactionConfig.
// Reconfigure builds a new one only when that config changes, so per-session
// state (Layer-1 boundaries, cached summaries) survives unrelated edits.
type compactor struct {
	cfg        CompactionConfig
	pipe       *compact.Pipeline
	calibrator *compact.Calibrator
	sigs       *sigcache.Cache // nil when the signature cache is off
}

func (c CompactionConfig) equal(o CompactionConfig) bool {
	limits := c.ContextLimits
	c.ContextLimits = o.ContextLimits // compare the rest as values, the table by content
	return reflect.DeepEqual(c, o) && maps.Equal(limits, o.ContextLimits)
}

// Thresholds returns the compaction thresholds with defaults filled in.
func (c CompactionConfig) Thresholds() compact.Thresholds {
	t := compact.Thresholds{L1: c.ThresholdL1, L2: c.ThresholdL2, L3: c.ThresholdL3}
	if t.Validate() != nil {
		return compact.DefaultThresholds()
	}
	return t
}

func (c CompactionConfig) validate() error {
	if c.ThresholdL1 == 0 && c.ThresholdL2 == 0 && c.ThresholdL3 == 0 {
		return nil
	}
	return compact.Thresholds{L1: c.ThresholdL1, L2: c.ThresholdL2, L3: c.ThresholdL3}.Validate()
}

// newCompactor builds the pipeline for c. The calibrator is shared by every
// generation (what it learned stays); the signature cache too, unless its
// size changed.
func (s *Server) newCompactor(c CompactionConfig, prev *compactor) *compactor {
	limits := compact.DefaultLimits()
	if c.ContextLimits != nil || c.DefaultContextLimit > 0 {
		table := c.ContextLimits
		if table == nil {
			table = compact.DefaultLimitTable()
		}
		limits = compact.NewLimits(table, c.DefaultContextLimit)
	}
	var sigs *sigcache.Cache
	if !c.NoSignatureCache {
		if prev != nil && prev.sigs != nil && prev.cfg.SignatureCacheSize == c.SignatureCacheSize {
			sigs = prev.sigs
		} else {
			n := c.SignatureCacheSize
			if n <= 0 {
				n = defaultSignatureCacheSize
			}
			sigs = sigcache.New(sigcache.Options{MaxTools: n, MaxSignatures: n, MaxSessions: n, Now: s.now})
		}
	}
	model := c.SummaryModel
	if model == "" {
		model = DefaultSummaryModel
	}
	o := compact.Options{
		Thresholds:          c.Thresholds(),
		KeepToolRounds:      c.KeepToolRounds,
		ProtectLastMessages: c.ProtectLastMessages,
		Compressor:          compact.CompressorOptions{MaxChars: c.MaxToolResultChars},
		Limits:              limits,
		Calibrator:          s.calibrator,
		NoCalibration:       c.NoUsageScaling,
		Summarizer:          &poolSummarizer{s: s, model: model},
		Repair:              compact.RepairOptions{Recover: !c.NoToolLoopRecovery, CrossModel: !c.NoCrossModelChecks},
		Logger:              s.log,
		Now:                 s.now,
		Cache:               compact.CacheOptions{Off: c.NoCacheAware, ForceRatio: c.ForceRatio, PaybackRequests: c.PaybackRequests},
		FoldDuplicates:      !c.NoFoldDuplicates,
		// Only results the screen would stop for are folded: a request it lets through
		// must forward the same bytes as if the engine had read it.
		Dedupe: compact.DedupeOptions{MinChars: compact.DefaultLargeChars},
	}
	if sigs != nil {
		o.Signatures = sigs
	}
	return &compactor{cfg: c, pipe: compact.NewPipeline(o), calibrator: s.calibrator, sigs: sigs}
}

// quickBytesPerToken bounds the estimator from above without reading the
// text: no character class costs more than a token per 3.5 bytes of UTF-8
// (ASCII 4 chars/token; CJK 3 bytes for 0.67 token; emoji 4 bytes for 1),
// and the JSON around the text only adds bytes.
const quickBytesPerToken = 3.5

// untouched reports, from what the peek saw and without parsing the body,
// whether the pipeline would forward the request exactly as it came: no
// tool result big enough for the compressor or holding an image or a
// saved-to-file notice, no signature to restore or drop, no thinking to
// purify, and a size so far below the Layer-1 threshold that no estimate of
// it could reach it. Each clause errs towards running the pipeline, and the
// steps that run whatever the pressure only act on what a clause catches, so
// a request forwards the same bytes whether or not it was screened here.
// limit is the context window, for the record.
func (c *compactor) untouched(p anthropic.Peek, body []byte, tg target, session string) (limit int, ok bool) {
	model := tg.model
	ms := p.Messages
	maxChars := c.cfg.MaxToolResultChars
	if maxChars <= 0 {
		maxChars = compact.DefaultMaxToolResultChars
	}
	if ms.MaxToolContent >= min(compact.DefaultLargeChars, maxChars) || ms.ToolImages > 0 || ms.SavedNotice {
		return 0, false
	}
	if tg.noThinking && ms.Thinking+ms.Redacted > 0 {
		return 0, false
	}
	family := compact.Family(model)
	if c.sigs != nil {
		if !c.cfg.NoToolLoopRecovery {
			if ms.Thinking > ms.Signed {
				return 0, false
			}
			if ms.Count >= 2 && anthropic.ThinkingEnabled(p.ThinkingSpan.Of(body)) &&
				compact.LoopMissingThinking(ms.LastSpans[0].Of(body), ms.LastSpans[1].Of(body)) {
				return 0, false
			}
		}
		if !c.cfg.NoCrossModelChecks && ms.Signed > 0 && c.sigs.OtherFamily(session, family) {
			return 0, false
		}
	}
	limit = tg.window.Tokens
	factor := 1.0
	if !c.cfg.NoUsageScaling {
		factor = c.calibrator.Factor(family)
	}
	bound := (float64(len(body))/quickBytesPerToken + float64(ms.Images*compact.DefaultDocumentTokens)) *
		factor * (1 + compact.DefaultMargin)
	return limit, bound <= c.pipe.Thresholds().L1*float64(limit)
}

// compactRequest runs the pipeline on a /v1/messages body (whose messages and blocks the peek
// counted) and records what it did in ex. An error is a Layer-3 failure the client must be told about;
// anything else that goes wrong leaves the body as it came.
func (s *Server) compactRequest(ctx context.Context, c *compactor, ex *Exchange, body []byte, counts anthropic.MessageStats, betas []string, tg target) (compact.Result, *Error) {
	ctx = context.WithValue(ctx, parentExchangeKey{}, ex)
	res, err := c.pipe.Run(ctx, compact.Input{
		Body: body, Model: tg.model, Session: ex.SessionID, Betas: betas, Limit: tg.window.Tokens,
		NoThinking: tg.noThinking, Messages: counts.Count, Blocks: counts.Blocks,
	})
	ex.ContextLimit = res.Limit
	ex.TokensBefore, ex.TokensAfter = res.Before.Calibrated, res.After.Calibrated
	if res.Limit > 0 {
		ex.PressureBefore = float64(res.Before.Calibrated) / float64(res.Limit)
		ex.PressureAfter = float64(res.After.Calibrated) / float64(res.Limit)
	}
	for _, st := range res.Stats {
		ex.Compaction = append(ex.Compaction, CompactionStep{
			Layer: string(st.Layer), TokensBefore: st.TokensBefore, TokensAfter: st.TokensAfter,
			RawBefore: st.RawBefore, RawAfter: st.RawAfter, Items: st.Items, Duration: st.Duration, CacheHit: st.CacheHit, Edits: st.Edits,
			Rewrite: st.Rewrite, Deferred: st.Deferred,
		})
	}
	ex.SignatureRecoveries, ex.CrossModelDropped = res.Repair.Recovered(), res.Repair.CrossModel
	switch {
	case compact.IsSummaryFailure(err):
		return res, newError(http.StatusBadRequest, anthropic.InvalidRequestError, compact.SummaryFailedMessage+" ("+err.Error()+")")
	case err != nil:
		// The peek validated the JSON, so this is the engine's limit, not the
		// client's fault: forward the request as it came.
		s.log.Warn("compaction skipped", "id", ex.ID, "err", err)
		return compact.Result{Body: body}, nil
	}
	return res, nil
}

// learn feeds what a successful reply revealed back into the engine: the real
// input tokens (calibration and the session's anchor) and the thinking
// signatures it issued (the signature cache). It runs after the reply
// reached the client.
func (s *Server) learn(c *compactor, out outbound, ex *Exchange) {
	if ex.Status < 200 || ex.Status >= 300 {
		return
	}
	u := ex.Usage
	if real := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens; real > 0 {
		c.pipe.LearnCache(ex.SessionID, compact.CacheUsage{Input: int(u.InputTokens), CacheRead: int(u.CacheReadInputTokens),
			CacheWrite: int(u.CacheCreationInputTokens)}, ex.Start, out.cacheTTL)
		if out.sizeBytes > 0 && !c.cfg.NoUsageScaling {
			// Screened, never parsed: its size anchors the session's next estimate.
			c.calibrator.SetSizeAnchor(ex.SessionID, out.sizeHeader, out.sizeBytes, int(real))
		} else {
			c.pipe.Learn(out.compacted, ex.SessionID, int(real))
		}
	}
	if c.sigs == nil || len(ex.Signatures) == 0 {
		return
	}
	family := compact.Family(ex.ModelSent)
	c.sigs.NoteFamily(ex.SessionID, family)
	for _, sig := range ex.Signatures {
		c.sigs.Record(ex.SessionID, family, sig)
	}
	for i, id := range ex.ToolUseIDs {
		if i < len(ex.ToolUseSignatures) && ex.ToolUseSignatures[i] != "" {
			c.sigs.PutToolSignature(id, ex.ToolUseSignatures[i])
		}
	}
}

// SessionCache reports what the engine knows of a session's prompt cache.
func (s *Server) SessionCache(session string) (compact.CacheState, bool) {
	if c := s.comp.Load(); c != nil {
		return c.pipe.Cache(session)
	}
	return compact.CacheState{}, false
}

// SignatureCacheStats reports the signature cache's sizes and recovery
// counters (zero when it is off).
func (s *Server) SignatureCacheStats() sigcache.Stats {
	if c := s.comp.Load(); c != nil && c.sigs != nil {
		return c.sigs.Stats()
	}
	return sigcache.Stats{}
}

// poolSummarizer is Layer 3's summary model, reached through the same
// account pool as client requests: picked by the rotation policy, mapped by
// the model map, and its failures cool accounts down like any other attempt.
type poolSummarizer struct {
	s     *Server
	model string
}

var _ compact.Summarizer = (*poolSummarizer)(nil)

func (p *poolSummarizer) Summarize(ctx context.Context, h compact.History) (string, error) {
	s := p.s
	cfg := s.cfg.Load()
	parent, _ := ctx.Value(parentExchangeKey{}).(*Exchange)
	// The summary call is an exchange of its own, a child of the request that caused it:
	// its account, tokens and status are in the record and the monitor.
	ex := &Exchange{ID: newExchangeID(), State: ExchangeStarted, Route: "summary", Method: http.MethodPost,
		Path: "/v1/messages", Model: p.model, Start: s.now(), ClientProtocol: ProtocolAnthropic}
	if parent != nil {
		ex.ParentID, ex.SessionID, ex.UserAgent = parent.ID, parent.SessionID, parent.UserAgent
	}
	s.observer.Observe(*ex)
	text, err := p.summarize(ctx, cfg, ex, h)
	ex.State, ex.End = ExchangeFinished, s.now()
	if err != nil && ex.ErrorMessage == "" {
		ex.ErrorType, ex.ErrorMessage = anthropic.APIError, err.Error()
	}
	if err == nil {
		ex.StopReason = "end_turn"
	}
	s.observer.Observe(*ex)
	return text, err
}

// parentExchangeKey carries, in a compaction's context, the exchange being compacted: a
// summary call records it as its parent.
type parentExchangeKey struct{}

func (p *poolSummarizer) summarize(ctx context.Context, cfg *Config, ex *Exchange, h compact.History) (string, error) {
	s := p.s
	var exclude []int64
	var last error
	for attempt := range cfg.MaxAttempts {
		acct, err := s.pool.Pick(pool.Pick{Model: p.model, Exclude: exclude, ModelMap: cfg.ModelMap}, s.now())
		if err != nil {
			if last != nil {
				return "", last
			}
			ex.Status = http.StatusServiceUnavailable
			return "", fmt.Errorf("no account for the summary model %s: %w", p.model, err)
		}
		model, _ := pool.MapModel(cfg.ModelMap, p.model, acct)
		ex.ModelSent, ex.UpstreamProtocol = model, acct.KindOf()
		sum := compact.HTTPSummarizer{BaseURL: acct.BaseURL, APIKey: acct.Secret, Model: model, Transport: s.transport,
			OnUsage: func(u compact.SummaryUsage) {
				ex.Usage = Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
			}}
		if up := upstreamFor(acct.KindOf()); up.kind() != pool.KindAnthropic {
			sum.Send = func(ctx context.Context, body []byte) (int, http.Header, []byte, error) {
				return sendTranslated(ctx, s.transport, acct, up, model, body)
			}
		}
		start := s.now()
		text, err := sum.Summarize(ctx, h)
		att := Attempt{AccountID: acct.ID, AccountName: acct.Name(), Start: start, Duration: s.now().Sub(start), Status: http.StatusOK}
		if err == nil {
			ex.Attempts, ex.Status = append(ex.Attempts, att), http.StatusOK
			s.pool.Report(acct.ID, model, pool.Outcome{Kind: pool.OutcomeSuccess, Tokens: ex.Usage.InputTokens + ex.Usage.OutputTokens}, s.now())
			s.log.Info("[Layer-3] summary written", "account", acct.Name(), "model", model, "took", s.now().Sub(start), "chars", len(text))
			return text, nil
		}
		att.Status, att.Error = 0, err.Error()
		if ctx.Err() != nil {
			ex.Attempts, ex.Status = append(ex.Attempts, att), statusClientClosed
			return "", err
		}
		out := pool.Outcome{Kind: pool.OutcomeOverloaded, Reason: err.Error()}
		var he *compact.SummaryHTTPError
		if errors.As(err, &he) {
			out = pool.Classify(he.Status, he.Header, he.Body, 0, s.now())
			att.Status = he.Status
		}
		ex.Attempts, ex.Status = append(ex.Attempts, att), att.Status
		s.pool.Report(acct.ID, model, out, s.now())
		s.log.Warn("[Layer-3] summary attempt failed", "account", acct.Name(), "model", model, "err", err)
		last = fmt.Errorf("account %s: %w", acct.Name(), err)
		if !out.Kind.Retryable() { // e.g. a 400 about the call itself: every account would say the same
			return "", last
		}
		exclude = append(exclude, acct.ID)
		// The attempt loop's rule: a short pause after an overload before the next account.
		if out.Kind == pool.OutcomeOverloaded && attempt+1 < cfg.MaxAttempts && !sleepCtx(ctx, retryBackoff(attempt)) {
			return "", last
		}
	}
	return "", last
}

// sendTranslated sends a Messages request to an account of another protocol, as the proxy's
// attempts do (translated, to the account's own origin, through the RoundTripper that follows
// no redirect), and returns the reply as Messages: a redirect as the error it is (redirect.go).
func sendTranslated(ctx context.Context, transport http.RoundTripper, acct pool.Account, up upstreamProtocol, model string, messages []byte) (int, http.Header, []byte, error) {
	uc := &upstreamCall{route: "messages", model: model, baseURL: acct.BaseURL}
	body, err := up.fromMessages(messages, uc)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("translate the summary call: %w", err)
	}
	req, err := up.newRequest(ctx, acct, uc, http.Header{}, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	resp, err := transport.RoundTrip(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("summary request: %w", err)
	}
	defer resp.Body.Close()
	if isRedirect(resp.StatusCode) {
		f := redirectFailure(resp, up)
		return f.status, nil, anthropic.ErrorJSON(anthropic.APIError, f.message()), nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read summary reply: %w", err)
	}
	if resp.StatusCode >= 400 {
		typ, msg := up.errorToMessages(resp.StatusCode, data)
		return resp.StatusCode, resp.Header, anthropic.ErrorJSON(typ, msg), nil
	}
	reply, err := up.replyToMessages(data, uc)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("translate the summary reply: %w", err)
	}
	return resp.StatusCode, resp.Header, reply, nil
}
