package store

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
)

// AppendExchangesJSON appends the JSON array of es to b: the bytes json.Marshal gives
// (TestAppendExchangesJSONIsEncodingJSON holds it to that for every field), built without
// reflection. The live feed encodes every exchange the proxy observes, thousands a second
// under load, and encoding/json was most of what that cost.
func AppendExchangesJSON(b []byte, es []Exchange) []byte {
	if es == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = es[i].appendJSON(b)
	}
	return append(b, ']')
}

func (e *Exchange) appendJSON(b []byte) []byte {
	b = appendInt(append(b, `{"seq":`...), e.Seq)
	b = appendJSONString(append(b, `,"id":`...), e.ID)
	b = appendJSONString(append(b, `,"parentID":`...), e.ParentID)
	b = appendJSONString(append(b, `,"replayOf":`...), e.ReplayOf)
	b = appendJSONString(append(b, `,"state":`...), e.State)
	b = appendJSONString(append(b, `,"route":`...), e.Route)
	b = appendJSONString(append(b, `,"clientProtocol":`...), e.ClientProtocol)
	b = appendJSONString(append(b, `,"upstreamProtocol":`...), e.UpstreamProtocol)
	b = appendJSONString(append(b, `,"method":`...), e.Method)
	b = appendJSONString(append(b, `,"path":`...), e.Path)
	b = appendJSONString(append(b, `,"userAgent":`...), e.UserAgent)
	b = appendJSONString(append(b, `,"remoteAddr":`...), e.RemoteAddr)
	b = appendJSONString(append(b, `,"sessionID":`...), e.SessionID)
	b = appendJSONString(append(b, `,"model":`...), e.Model)
	b = appendJSONString(append(b, `,"modelSent":`...), e.ModelSent)
	b = strconv.AppendBool(append(b, `,"stream":`...), e.Stream)
	b = appendInt(append(b, `,"accountID":`...), e.AccountID)
	b = appendJSONString(append(b, `,"accountName":`...), e.AccountName)
	b = appendJSONTime(append(b, `,"start":`...), e.Start)
	b = appendJSONTime(append(b, `,"firstByte":`...), e.FirstByte)
	b = appendJSONTime(append(b, `,"end":`...), e.End)
	b = appendInt(append(b, `,"durationNs":`...), int64(e.Duration))
	b = appendInt(append(b, `,"ttfbNs":`...), int64(e.TTFB))
	b = appendInt(append(b, `,"status":`...), int64(e.Status))
	b = appendJSONString(append(b, `,"errorType":`...), e.ErrorType)
	b = appendJSONString(append(b, `,"errorMessage":`...), e.ErrorMessage)
	b = appendJSONString(append(b, `,"streamOutcome":`...), e.StreamOutcome)
	b = appendJSONString(append(b, `,"stopReason":`...), e.StopReason)
	b = strconv.AppendBool(append(b, `,"failed":`...), e.Failed)
	b = appendInt(append(b, `,"inputTokens":`...), e.InputTokens)
	b = appendInt(append(b, `,"outputTokens":`...), e.OutputTokens)
	b = appendInt(append(b, `,"cacheReadTokens":`...), e.CacheReadTokens)
	b = appendInt(append(b, `,"cacheWriteTokens":`...), e.CacheWriteTokens)
	if c := e.Cost; c != nil {
		b = appendJSONFloat(append(b, `,"cost":{"input":`...), c.Input)
		b = appendJSONFloat(append(b, `,"output":`...), c.Output)
		b = appendJSONFloat(append(b, `,"cacheRead":`...), c.CacheRead)
		b = appendJSONFloat(append(b, `,"cacheWrite":`...), c.CacheWrite)
		b = append(appendJSONFloat(append(b, `,"total":`...), c.Total), '}')
	}
	b = appendInt(append(b, `,"contextLimit":`...), int64(e.ContextLimit))
	b = appendJSONString(append(b, `,"contextLimitSource":`...), e.ContextLimitSource)
	b = appendInt(append(b, `,"tokensBefore":`...), int64(e.TokensBefore))
	b = appendInt(append(b, `,"tokensAfter":`...), int64(e.TokensAfter))
	b = appendJSONFloat(append(b, `,"pressureBefore":`...), e.PressureBefore)
	b = appendJSONFloat(append(b, `,"pressureAfter":`...), e.PressureAfter)
	b = appendJSONStrings(append(b, `,"layers":`...), e.Layers)
	b = appendInt(append(b, `,"tokensSaved":`...), int64(e.TokensSaved))
	b = appendInt(append(b, `,"signatureRecoveries":`...), int64(e.SignatureRecoveries))
	b = appendInt(append(b, `,"crossModelDropped":`...), int64(e.CrossModelDropped))
	b = appendInt(append(b, `,"signatures":`...), int64(e.Signatures))
	b = appendJSONStrings(append(b, `,"toolUseIDs":`...), e.ToolUseIDs)
	b = appendInt(append(b, `,"tools":`...), int64(e.Tools))
	b = appendInt(append(b, `,"toolTokens":`...), int64(e.ToolTokens))
	b = appendJSONStrings(append(b, `,"toolsCalled":`...), e.ToolsCalled)
	if len(e.ClientHeaders) > 0 {
		b = append(b, `,"clientHeaders":{`...)
		for i, k := range slices.Sorted(maps.Keys(e.ClientHeaders)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(appendJSONString(b, k), ':'), e.ClientHeaders[k])
		}
		b = append(b, '}')
	}
	b = appendInt(append(b, `,"bytesIn":`...), e.BytesIn)
	b = appendInt(append(b, `,"bytesOut":`...), e.BytesOut)
	b = strconv.AppendBool(append(b, `,"hasBodies":`...), e.HasBodies)
	b = strconv.AppendBool(append(b, `,"bodiesTruncated":`...), e.BodiesTruncated)
	if len(e.Attempts) > 0 {
		b = append(b, `,"attempts":[`...)
		for i, a := range e.Attempts {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendInt(append(b, `{"accountID":`...), a.AccountID)
			b = appendJSONString(append(b, `,"accountName":`...), a.AccountName)
			b = appendInt(append(b, `,"status":`...), int64(a.Status))
			b = appendJSONString(append(b, `,"error":`...), a.Error)
			b = appendJSONTime(append(b, `,"start":`...), a.Start)
			b = append(appendInt(append(b, `,"durationNs":`...), int64(a.Duration)), '}')
		}
		b = append(b, ']')
	}
	if len(e.Compaction) > 0 {
		b = append(b, `,"compaction":[`...)
		for i, c := range e.Compaction {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"layer":`...), c.Layer)
			b = appendInt(append(b, `,"tokensBefore":`...), int64(c.TokensBefore))
			b = appendInt(append(b, `,"tokensAfter":`...), int64(c.TokensAfter))
			b = appendInt(append(b, `,"rawBefore":`...), int64(c.RawBefore))
			b = appendInt(append(b, `,"rawAfter":`...), int64(c.RawAfter))
			b = appendInt(append(b, `,"items":`...), int64(c.Items))
			b = appendInt(append(b, `,"durationNs":`...), int64(c.Duration))
			b = strconv.AppendBool(append(b, `,"cacheHit":`...), c.CacheHit)
			if len(c.Edits) > 0 {
				b = appendEdits(append(b, `,"edits":`...), c.Edits)
			}
			b = appendInt(append(b, `,"rewrite":`...), int64(c.Rewrite))
			if c.Deferred != "" {
				b = appendJSONString(append(b, `,"deferred":`...), c.Deferred)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if e.Bodies != nil {
		b = appendJSONString(append(b, `,"bodies":{"request":`...), e.Bodies.Request)
		b = appendJSONString(append(b, `,"forwarded":`...), e.Bodies.Forwarded)
		b = append(appendJSONString(append(b, `,"reply":`...), e.Bodies.Reply), '}')
	}
	if len(e.Children) > 0 {
		b = AppendExchangesJSON(append(b, `,"children":`...), e.Children)
	}
	if len(e.Replays) > 0 {
		b = AppendExchangesJSON(append(b, `,"replays":`...), e.Replays)
	}
	return append(b, '}')
}

// appendEdits writes a step's edits as json.Marshal does: for the live feed and for the
// edits column of exchange_compaction, which holds the same JSON.
func appendEdits(b []byte, edits []Edit) []byte {
	b = append(b, '[')
	for i, ed := range edits {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"kind":`...), ed.Kind)
		b = appendInt(append(b, `,"message":`...), int64(ed.Message))
		b = appendInt(append(b, `,"through":`...), int64(ed.Through))
		b = appendInt(append(b, `,"block":`...), int64(ed.Block))
		b = appendInt(append(b, `,"count":`...), int64(ed.Count))
		b = appendInt(append(b, `,"tokensBefore":`...), int64(ed.TokensBefore))
		b = appendInt(append(b, `,"tokensAfter":`...), int64(ed.TokensAfter))
		b = appendJSONString(append(b, `,"before":`...), ed.Before)
		b = appendJSONString(append(b, `,"after":`...), ed.After)
		b = append(appendJSONString(append(b, `,"note":`...), ed.Note), '}')
	}
	return append(b, ']')
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }

// plainJSON marks the bytes encoding/json writes as they are inside a string: printable
// ASCII but for the quote, the backslash and the HTML characters it escapes (<, >, &).
var plainJSON = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString writes s as encoding/json does; a string with a byte it escapes (rare in
// a record's fields) is left to encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !plainJSON[s[i]] {
			q, err := json.Marshal(s)
			if err != nil { // a string always encodes
				return append(b, `""`...)
			}
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

func appendJSONStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONTime writes t as time.Time.MarshalJSON does (RFC 3339 with nanoseconds).
func appendJSONTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// appendJSONFloat writes f as encoding/json does: like strconv's shortest form, with an
// exponent only below 1e-6 and from 1e21, written without padding (1e-7, not 1e-07).
func appendJSONFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, '0') // encoding/json refuses them; no record holds one
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
