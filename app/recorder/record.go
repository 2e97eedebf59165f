package recorder

import (
	"unsafe"

	"longhaul/proxy"
	"longhaul/proxy/compact"
	"longhaul/store"
)

// record maps what the proxy observed to a history row. Bodies follow the history settings:
// none when body storage is off, each capped otherwise. The store redacts when writing.
func record(ex *proxy.Exchange, bodies *bodyPolicy) store.Exchange {
	rec := store.Exchange{
		ID: ex.ID, ParentID: ex.ParentID, ReplayOf: ex.ReplayOf, State: string(ex.State), Route: ex.Route, Method: ex.Method, Path: ex.Path,
		ClientProtocol: ex.ClientProtocol, UpstreamProtocol: ex.UpstreamProtocol,
		UserAgent: ex.UserAgent, RemoteAddr: ex.RemoteAddr, SessionID: ex.SessionID,
		Model: ex.Model, ModelSent: ex.ModelSent, Stream: ex.Stream,
		Start: ex.Start, FirstByte: ex.FirstByte, End: ex.End,
		Status: ex.Status, ErrorType: ex.ErrorType, ErrorMessage: ex.ErrorMessage,
		StreamOutcome: ex.StreamOutcome, StopReason: ex.StopReason,
		InputTokens: ex.Usage.InputTokens, OutputTokens: ex.Usage.OutputTokens,
		CacheReadTokens: ex.Usage.CacheReadInputTokens, CacheWriteTokens: ex.Usage.CacheCreationInputTokens,
		ContextLimit: ex.ContextLimit, ContextLimitSource: ex.ContextLimitSource, ClientHeaders: ex.ClientHeaders,
		TokensBefore: ex.TokensBefore, TokensAfter: ex.TokensAfter,
		PressureBefore: ex.PressureBefore, PressureAfter: ex.PressureAfter,
		SignatureRecoveries: ex.SignatureRecoveries, CrossModelDropped: ex.CrossModelDropped,
		Signatures: len(ex.Signatures), ToolUseIDs: append([]string{}, ex.ToolUseIDs...),
		Tools: ex.Tools, ToolTokens: ex.ToolTokens, ToolsCalled: append([]string{}, ex.ToolsCalled...),
		BytesIn: ex.BytesIn, BytesOut: ex.BytesOut, BodiesTruncated: ex.BodiesTruncated,
		Layers: []string{},
	}
	rec.Failed = rec.HasFailed()
	// Durations are measured on the proxy's clock: the end is when the last byte of a stream
	// went out (or the client left), so a stream's duration covers all of it; TTFB is apart.
	if !ex.End.IsZero() {
		rec.Duration = ex.End.Sub(ex.Start)
	}
	if !ex.FirstByte.IsZero() {
		rec.TTFB = ex.FirstByte.Sub(ex.Start)
	}
	if n := len(ex.Attempts); n > 0 {
		rec.AccountID, rec.AccountName = ex.Attempts[n-1].AccountID, ex.Attempts[n-1].AccountName
		rec.Attempts = make([]store.Attempt, 0, n)
		for _, a := range ex.Attempts {
			rec.Attempts = append(rec.Attempts, store.Attempt{
				AccountID: a.AccountID, AccountName: a.AccountName, Status: a.Status, Error: a.Error,
				Start: a.Start, Duration: a.Duration,
			})
		}
	}
	for _, c := range ex.Compaction {
		// The model map and the translation are in the ledger but are no compaction, and a
		// deferred step changed nothing: the layers column is what the dashboard and the
		// sessions count as compactions.
		if c.Layer != proxy.StepModelMap && c.Layer != proxy.StepTranslate && c.Deferred == "" {
			rec.Layers = append(rec.Layers, c.Layer)
			rec.TokensSaved += c.TokensSaved()
		}
		rec.Compaction = append(rec.Compaction, store.CompactionStep{
			Layer: c.Layer, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter,
			RawBefore: c.RawBefore, RawAfter: c.RawAfter, Items: c.Items, Duration: c.Duration, CacheHit: c.CacheHit,
			Edits: edits(c.Edits), Rewrite: c.Rewrite, Deferred: c.Deferred,
		})
	}
	if bodies != nil && bodies.store && ex.State == proxy.ExchangeFinished {
		b := store.Bodies{
			Request:   capBody(ex.RequestBody, bodies.maxBytes, &rec.BodiesTruncated),
			Forwarded: capBody(ex.ForwardedBody, bodies.maxBytes, &rec.BodiesTruncated),
			Reply:     capBody(ex.ReplyBody, bodies.maxBytes, &rec.BodiesTruncated),
		}
		if b.Request != "" || b.Forwarded != "" || b.Reply != "" {
			if r := ex.RequestRepeats; r.Bytes > 0 && b.Request != "" {
				b.RequestRepeats = store.Repeats{Exchange: r.Exchange, Bytes: min(r.Bytes, len(b.Request))}
			}
			b.RequestMessageEnds = ex.RequestMessageEnds
			rec.Bodies = &b
		}
	}
	return rec
}

// edits copies a step's ledger into the store's type; nil when it has none, as a step read
// back without edits is.
func edits(es []compact.Edit) []store.Edit {
	if len(es) == 0 {
		return nil
	}
	out := make([]store.Edit, len(es))
	for i, e := range es {
		out[i] = store.Edit{
			Kind: string(e.Kind), Message: e.Message, Through: e.Through, Block: e.Block, Count: e.Count,
			TokensBefore: e.TokensBefore, TokensAfter: e.TokensAfter, Before: e.Before, After: e.After, Note: e.Note,
		}
	}
	return out
}

// capBody returns at most max bytes of b as a string that shares b's memory: the record
// lives only until the batch is written, and the bodies stay unmodified until the writer
// releases them after the commit (Recorder.release), so a copy here would only be garbage —
// 800 KB of it per large request. The store copies what it keeps.
func capBody(b []byte, max int, truncated *bool) string {
	if max > 0 && len(b) > max {
		*truncated = true
		b = b[:max]
	}
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
