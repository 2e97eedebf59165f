package proxy

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
)

// Exchange is the record of one client request: what came in, where it went,
// how every attempt ended and what came back. It never holds a secret.
type Exchange struct {
	ID    string
	State ExchangeState
	Route string // "messages", "count_tokens", "models", "chat", "responses", "generate", "models"
	// ClientProtocol is the wire format the client spoke (ProtocolAnthropic, ProtocolOpenAIChat,
	// ProtocolOpenAIResponses, ProtocolGemini); UpstreamProtocol the one the last attempt sent
	// (the account's kind: pool.KindAnthropic, KindOpenAI, KindOpenAIResponses, KindGemini), ""
	// when no attempt was made.
	ClientProtocol   string
	UpstreamProtocol string
	// ParentID is, for a request the proxy made itself on behalf of a client's (a Layer-3
	// summary call, Route "summary"), the id of that client's exchange; "" otherwise.
	ParentID string
	// ReplayOf is, for a replay (Server.Replay), the id of the exchange it re-sent.
	ReplayOf   string
	Method     string
	Path       string
	UserAgent  string
	RemoteAddr string
	Model      string // as the client asked
	ModelSent  string // after proxy.model_map, as the last attempt sent it
	Stream     bool
	SessionID  string

	Start     time.Time
	FirstByte time.Time // first byte written to the client; zero if none
	End       time.Time

	Status       int // status the client saw
	ErrorType    string
	ErrorMessage string
	// StreamOutcome is "complete", "client_cancelled" or "upstream_error" for streams.
	StreamOutcome string

	Usage      Usage
	StopReason string
	// Signatures are the thinking signatures the upstream issued, in order;
	// ToolUseIDs the tool_use blocks it opened, and ToolUseSignatures[i] the
	// signature in effect when ToolUseIDs[i] opened ("" when none). The
	// signature cache reads them.
	Signatures        []string
	ToolUseIDs        []string
	ToolUseSignatures []string
	// Tools is how many tool definitions the request offered and ToolTokens about how many
	// tokens they take (they are sent on every turn); ToolsCalled the tools the reply called,
	// in order (the tool inventory).
	Tools       int
	ToolTokens  int
	ToolsCalled []string

	// ClientHeaders are the client's ReplayHeaders, as sent (several values joined by ", ").
	ClientHeaders map[string]string

	// Context pressure and compaction, for /v1/messages (zero elsewhere).
	// Tokens are calibrated estimates; Pressure* are tokens / ContextLimit.
	ContextLimit int
	// ContextLimitSource says where ContextLimit comes from: "setting" (proxy.context_limits),
	// "default", "beta" (the context-1m beta raised a default) or "learned" (the upstream
	// refused a longer request).
	ContextLimitSource string
	TokensBefore       int // the request as received
	TokensAfter        int // the request as forwarded
	PressureBefore     float64
	PressureAfter      float64
	// Compaction lists every step that changed the request, in order.
	Compaction []CompactionStep
	// SignatureRecoveries counts thinking signatures restored from the
	// signature cache; CrossModelDropped thinking blocks removed because their
	// signature belongs to another model family.
	SignatureRecoveries int
	CrossModelDropped   int
	// RequestBody is the request exactly as received: always kept when the
	// proxy rewrote it or refused it after compaction (so the monitor can show
	// before/after), and for every request when Config.CaptureBodies is on. ForwardedBody is what
	// went upstream when it differs. ReplyBody is the reply: the JSON of a
	// non-stream reply, the reconstructed message of a stream. Each is capped
	// at Config.MaxCaptureBytes. ForwardedBody and ReplyBody are copies the
	// observer may keep; RequestBody is lent: it is the proxy's pooled buffer,
	// valid until the observer calls ReleaseBodies (an observer that never
	// does only costs the pool that buffer). Keys travel in headers, which
	// are not kept; bodies may still hold key-shaped text a client pasted, so
	// a store redacts before writing.
	RequestBody   []byte
	ForwardedBody []byte
	ReplyBody     []byte
	// RequestRepeats: the request body starts with what another exchange's did (a session's
	// previous turn), as the proxy found comparing them byte for byte.
	RequestRepeats RequestRepeats `json:"-"`
	// RequestMessageEnds are where the request body's messages end (byte offsets, ascending),
	// as the peek found them: a store that cuts a session's bodies there finds the next turn's
	// shared part ending on a cut. Nil when the peek did not note them.
	RequestMessageEnds []int `json:"-"`
	// BodiesTruncated reports that a body was cut at MaxCaptureBytes.
	BodiesTruncated bool

	Attempts []Attempt
	BytesIn  int64
	BytesOut int64

	abort     bool        // the reply broke off mid-body: the connection must be aborted
	rateLimit http.Header // the reply's anthropic-ratelimit-* headers, for the quota view
	kept      *requestBody
	keptMax   int
	lent      *requestBody // the buffer RequestBody points into, until ReleaseBodies
}

// RequestRepeats says that the first Bytes bytes of an exchange's request body are, byte for
// byte, those of exchange Exchange's request body: a store that kept that one need keep only
// what follows, without comparing them again. Bytes is 0 when the body repeats none.
type RequestRepeats struct {
	Exchange string
	Bytes    int
}

// pressureFromUsage fills the pressure of a request the proxy did not need
// to estimate (it was far below every threshold) from what the upstream
// counted: better than an estimate, and free.
func (ex *Exchange) pressureFromUsage() {
	u := ex.Usage
	real := int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens)
	if real <= 0 || ex.ContextLimit <= 0 {
		return
	}
	ex.TokensBefore, ex.TokensAfter = real, real
	ex.PressureBefore = float64(real) / float64(ex.ContextLimit)
	ex.PressureAfter = ex.PressureBefore
}

// keepRequestBody holds a reference to the client's body so RequestBody can
// be copied when the exchange finishes: after the reply, off the latency
// path, and even if a committed stream already let the buffer go.
func (ex *Exchange) keepRequestBody(b *requestBody, max int) {
	if b == nil || ex.kept != nil {
		return
	}
	b.retain()
	ex.kept, ex.keptMax = b, max
}

// takeRequestBody lends the kept buffer to the observer instead of copying it: an 800 KB
// copy per request was the largest allocation left on the path, and the recorder copies
// what it keeps anyway.
func (ex *Exchange) takeRequestBody() {
	if ex.kept == nil {
		return
	}
	n := len(ex.kept.buf)
	if ex.keptMax > 0 && n > ex.keptMax {
		n, ex.BodiesTruncated = ex.keptMax, true
	}
	ex.RequestBody = ex.kept.buf[:n:n]
	ex.lent, ex.kept = ex.kept, nil
}

// WithoutBodies returns a copy of the exchange with no bodies and no loan, for an observer's
// views that need none (a live monitor).
func (ex Exchange) WithoutBodies() Exchange {
	ex.RequestBody, ex.ForwardedBody, ex.ReplyBody, ex.lent = nil, nil, nil, nil
	return ex
}

// ReleaseBodies ends the loan of RequestBody (see Exchange.RequestBody): its buffer goes
// back to the proxy's pool, and the exchange's bodies are cleared. An Observer that kept the
// exchange calls it once it is done with the bodies; calling it again does nothing.
func (ex *Exchange) ReleaseBodies() {
	if ex.lent != nil {
		ex.lent.unref()
		ex.lent = nil
	}
	ex.RequestBody, ex.ForwardedBody, ex.ReplyBody = nil, nil, nil
}

// outcome is what a committed exchange says about its account: a stream that
// failed after its first byte still counts against the account.
func (ex *Exchange) outcome() pool.Outcome {
	o := pool.Outcome{Kind: pool.OutcomeSuccess, Header: ex.rateLimit, Tokens: ex.Usage.InputTokens + ex.Usage.OutputTokens}
	if ex.StreamOutcome == "upstream_error" || ex.abort {
		o.Kind, o.Reason = pool.OutcomeOverloaded, ex.ErrorMessage
		if ex.ErrorType == "rate_limit_error" {
			o.Kind = pool.OutcomeRateLimited
		}
	}
	return o
}

func (ex *Exchange) clientGone() {
	ex.Status = statusClientClosed
	ex.ErrorType, ex.ErrorMessage = "client_cancelled", "client closed the request"
	if ex.Stream {
		ex.StreamOutcome = "client_cancelled"
	}
}

// CompactionStep is one step of the compaction pipeline that changed a
// request (the tool-result compressor, purification, Layer 1–3, signature repair).
type CompactionStep struct {
	// Layer is the engine's step ("signatures", "tool-results", "purify", "Layer-1", "Layer-2",
	// "Layer-3") or one the proxy takes around it (StepModelMap, StepTranslate).
	Layer        string
	TokensBefore int // calibrated estimates
	TokensAfter  int
	RawBefore    int // uncalibrated estimates
	RawAfter     int
	// Items is what the step touched: tool results compressed, rounds removed,
	// thinking blocks elided or dropped, messages summarised, signatures restored.
	Items    int
	Duration time.Duration
	CacheHit bool // Layer 3: the summary came from the per-session cache
	// Edits is what the step changed (the ledger): which message or block, how, and the
	// tokens on each side.
	Edits []compact.Edit
	// Rewrite is how many tokens the step made the upstream write to its prompt cache again;
	// Deferred, when set, says why the step waited for the cache instead (nothing changed).
	Rewrite  int
	Deferred string
}

// ReplayHeaders are the client headers an exchange keeps (lower case): they change what a
// request means (a beta's features, its window, the API version), so a replay sends them again.
// None carries a credential.
var ReplayHeaders = []string{"anthropic-beta", "anthropic-version", "openai-beta"}

// clientHeaders picks ReplayHeaders out of h (nil when none is set).
func clientHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, k := range ReplayHeaders {
		if v := h.Values(k); len(v) > 0 {
			if out == nil {
				out = make(map[string]string, len(ReplayHeaders))
			}
			out[k] = strings.Join(v, ", ")
		}
	}
	return out
}

// Steps the proxy records around the engine's, for the last attempt.
const (
	StepModelMap  = "model-map"
	StepTranslate = "translate"
)

// noteAttempt records in the ledger what the attempt about to be sent changes besides
// compaction: the model the model map chose and a translation into the account's protocol.
// Only the last attempt's stay: the ledger describes the forwarded body, which is the last
// attempt's.
func (ex *Exchange) noteAttempt(client clientProtocol, upstream string, translated bool) {
	ex.Compaction = slices.DeleteFunc(ex.Compaction, func(st CompactionStep) bool {
		return st.Layer == StepModelMap || st.Layer == StepTranslate
	})
	if ex.ModelSent != "" && ex.ModelSent != ex.Model {
		ex.Compaction = append(ex.Compaction, CompactionStep{Layer: StepModelMap, Items: 1, Edits: []compact.Edit{{
			Kind: compact.EditModelRenamed, Message: -1, Through: -1, Block: -1, Count: 1,
			Before: ex.Model, After: ex.ModelSent, Note: "proxy.model_map"}}})
	}
	if !translated {
		return
	}
	note := client.name() + " → " + upstream
	switch {
	case client.nativeKind() == pool.KindAnthropic && upstream == pool.KindAnthropic:
		note = "thinking signed by another model family removed"
	case client.nativeKind() == upstream:
		note = client.name() + " → Messages, compacted → " + upstream
	}
	ex.Compaction = append(ex.Compaction, CompactionStep{Layer: StepTranslate, Items: 1, Edits: []compact.Edit{{
		Kind: compact.EditTranslated, Message: -1, Through: -1, Block: -1, Count: 1,
		Before: client.name(), After: upstream, Note: note}}})
}

// TokensSaved is how many (estimated) tokens the step took out.
func (c CompactionStep) TokensSaved() int { return c.TokensBefore - c.TokensAfter }

// Client protocols, as Exchange.ClientProtocol names them.
const (
	ProtocolAnthropic       = "anthropic"
	ProtocolOpenAIChat      = "openai-chat"
	ProtocolOpenAIResponses = "openai-responses"
	ProtocolGemini          = "gemini"
)

// ExchangeState tells a live view whether a record is new or final.
type ExchangeState string

const (
	ExchangeStarted  ExchangeState = "started"
	ExchangeFinished ExchangeState = "finished"
)

// Attempt is one try against one upstream account.
type Attempt struct {
	AccountID   int64
	AccountName string
	Status      int // 0 when no response arrived
	Error       string
	Start       time.Time
	Duration    time.Duration
}

// Usage is token accounting as the upstream reported it.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// Observer receives exchanges: once when a request starts and once when it
// ends. Observe is called on the request's goroutine and must not block; an
// implementation hands the value off (e.g. a non-blocking channel send).
type Observer interface {
	Observe(Exchange)
}

type discardObserver struct{}

func (discardObserver) Observe(Exchange) {}
