package compact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"longhaul/proxy/anthropic"
)

// Layer names a pipeline step in Stats and logs.
type Layer string

const (
	LayerSignatures  Layer = "signatures"
	LayerToolResults Layer = "tool-results"
	LayerDedupe      Layer = "dedupe"
	LayerPurify      Layer = "purify"
	Layer1Trim       Layer = "Layer-1"
	Layer2Thinking   Layer = "Layer-2"
	Layer3Summary    Layer = "Layer-3"
)

// Thresholds are pressure ratios (tokens / context window) above which each
// layer runs.
type Thresholds struct{ L1, L2, L3 float64 }

// DefaultThresholds are 0.4 / 0.55 / 0.7: trimming starts early, where it
// is cheap and cache-friendly, and the lossy summary only at 70%, with room
// left for the reply.
func DefaultThresholds() Thresholds { return Thresholds{L1: 0.4, L2: 0.55, L3: 0.7} }

// Validate checks 0 < L1 ≤ L2 ≤ L3 ≤ 1.
func (t Thresholds) Validate() error {
	if !(0 < t.L1 && t.L1 <= t.L2 && t.L2 <= t.L3 && t.L3 <= 1) {
		return fmt.Errorf("compaction thresholds %v/%v/%v: want 0 < L1 ≤ L2 ≤ L3 ≤ 1", t.L1, t.L2, t.L3)
	}
	return nil
}

// Options configures a Pipeline. The zero value of each field is documented.
type Options struct {
	Thresholds          Thresholds        // zero = DefaultThresholds()
	KeepToolRounds      int               // Layer 1; 0 = DefaultKeepToolRounds
	ProtectLastMessages int               // Layer 2; 0 = DefaultProtectLastMessages
	Compressor          CompressorOptions // zero = the Default* compressor limits
	Limits              *Limits           // nil = DefaultLimits()
	Calibrator          *Calibrator       // nil = a fresh one (factors 1, no anchors)
	Summarizer          Summarizer        // nil = Layer 3 fails with ErrSummaryFailed when needed
	Sessions            int               // sessions whose boundary/summary are remembered; 0 = 1024
	Now                 func() time.Time  // for Stats.Duration; nil = time.Now
	// NoCalibration estimates without the calibrator's factors and anchors,
	// and Learn does not feed it (proxy.experimental.enable_usage_scaling off).
	NoCalibration bool
	// Signatures is the signature cache the repair step reads; nil = no repair.
	Signatures SignatureSource
	Repair     RepairOptions
	// Logger receives the [Layer-N] lines and signature recoveries; nil = discard.
	Logger *slog.Logger
	// Cache schedules the lossy steps around the session's prompt cache (cache.go).
	Cache CacheOptions
	// FoldDuplicates folds duplicate tool results (FoldDuplicateResults) at the moments a
	// fold costs no cache re-write of its own: when the session's cache is cold or unknown,
	// or right after a Layer-1 move; in between, the folds made then are repeated exactly.
	FoldDuplicates bool
	Dedupe         DedupeOptions // zero = DefaultDedupeMinChars
}

// Pipeline runs tool-result compression, purification and Layers 1–3. It is
// safe for concurrent use; per-session state is internally locked.
type Pipeline struct {
	o     Options
	count *Calibrator // o.Calibrator, or a neutral one that never learns
	comp  *Compressor
	l1    *Layer1
	l3    *Layer3
	// cache is each session's prompt cache as its replies showed it; elided the bound of the
	// Layer-2 elision its last forwarded request carried.
	cache  *memo[CacheState]
	elided *memo[int]
	folds  *memo[Folds] // the duplicate results folded at the session's last fold moment
}

// NewPipeline returns a Pipeline; invalid thresholds fall back to the defaults.
func NewPipeline(o Options) *Pipeline {
	if o.Thresholds.Validate() != nil {
		o.Thresholds = DefaultThresholds()
	}
	if o.Limits == nil {
		o.Limits = DefaultLimits()
	}
	if o.Calibrator == nil {
		o.Calibrator = NewCalibrator(CalibratorOptions{})
	}
	if o.ProtectLastMessages <= 0 {
		o.ProtectLastMessages = DefaultProtectLastMessages
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	raw := o.Calibrator
	if o.NoCalibration {
		raw = NewCalibrator(CalibratorOptions{Estimator: o.Calibrator.opts.Estimator})
	}
	o.Cache = o.Cache.withDefaults()
	return &Pipeline{o: o, count: raw, comp: NewCompressor(o.Compressor),
		l1: NewLayer1(o.KeepToolRounds, o.Sessions), l3: NewLayer3(o.Summarizer, o.Sessions),
		cache: newMemo[CacheState](o.Sessions), elided: newMemo[int](o.Sessions), folds: newMemo[Folds](o.Sessions)}
}

// Input is one request to compact.
type Input struct {
	Body       []byte   // the client's body; never modified
	Model      string   // target model; "" = the body's model
	Session    string   // session id; "" = no per-session state (no anchor, boundary or summary cache)
	Betas      []string // anthropic-beta values (context-1m raises the window)
	NoThinking bool     // the target model has no thinking support: purify
	// Limit is the context window to compact for; 0 = the Limits table's for Model and Betas.
	// The proxy sets it when it knows better (a window an upstream revealed).
	Limit int
	// Messages and Blocks are how many messages and content blocks Body holds, when the caller
	// has counted them (the peek does); 0 = unknown. The parse then makes its lists once.
	Messages, Blocks int
}

// Stats reports one step that changed the request.
type Stats struct {
	Layer        Layer
	TokensBefore int // calibrated estimate before the step
	TokensAfter  int
	RawBefore    int // uncalibrated estimate, for the log
	RawAfter     int
	Items        int // rounds removed, thinking blocks elided, tool results compressed, messages summarised
	Duration     time.Duration
	CacheHit     bool // Layer 3: summary reused
	// Rewrite is how many tokens the step made the upstream write to its prompt cache again
	// (estimated; 0 when the cache was cold). Deferred, when set, says why the step waited
	// instead (it then changed nothing).
	Rewrite  int
	Deferred string
	// Edits is what the step changed, message by message (the ledger).
	Edits []Edit
}

// Result is the outcome of Run.
type Result struct {
	Body    []byte // the body to forward; the same slice as Input.Body when Changed is false
	Changed bool
	Limit   int    // context window used
	Before  Tokens // pressure as received
	After   Tokens // pressure as forwarded
	Stats   []Stats
	Repair  RepairStats

	family  string
	profile *Profile // of the request as forwarded, for Learn
}

// Ratio is After.Calibrated / Limit.
func (r Result) Ratio() float64 { return float64(r.After.Calibrated) / float64(max(r.Limit, 1)) }

// Run compacts one request. Each layer runs only while the pressure is still
// above its threshold after the cheaper ones ran. A Layer-3 failure returns
// an error wrapping ErrSummaryFailed together with the Result so far.
func (p *Pipeline) Run(ctx context.Context, in Input) (Result, error) {
	req, err := anthropic.ParseRequestCounted(in.Body, in.Messages, in.Blocks)
	if err != nil {
		return Result{Body: in.Body}, err
	}
	r := p.newRun(in, req)
	th := p.o.Thresholds
	if p.o.Signatures != nil {
		r.step(LayerSignatures, r.repairSignatures)
	}
	r.step(LayerToolResults, func() (int, bool, error) { return p.comp.Apply(req).Items(), false, nil })
	if p.o.FoldDuplicates {
		r.step(LayerDedupe, func() (int, bool, error) { return r.fold(r.cache == nil), false, nil })
	}
	if in.NoThinking {
		r.step(LayerPurify, func() (int, bool, error) { return Purify(req), false, nil })
	}
	// The client's history after the lossless and per-message steps: what a
	// Layer-3 summary covers, whatever Layers 1–2 then do to req.
	orig := slices.Clone(req.Messages)
	summaryRequest := IsSummaryRequest(req)
	if r.above(th.L1) && !summaryRequest {
		// A session already forked stays forked while its history still
		// starts with what the summary covers: the forwarded prefix stays
		// the same and no summary call is needed.
		r.step(Layer3Summary, func() (int, bool, error) {
			n, ok := p.l3.Resume(req, in.Session)
			return n, ok, nil
		})
	}
	if r.above(th.L1) {
		r.step(Layer1Trim, r.trim)
	}
	if p.o.FoldDuplicates && r.moved && r.cache != nil {
		// The move re-writes the prefix anyway: fold what piled up since the last fold moment.
		r.step(LayerDedupe, func() (int, bool, error) { return r.fold(true), false, nil })
	}
	if r.above(th.L2) {
		r.step(Layer2Thinking, r.elide)
	}
	if r.above(th.L3) && !summaryRequest && !r.deferSummary(orig) {
		if err := r.summarize(ctx, orig); err != nil {
			return r.res, err
		}
	}
	r.res.After = r.cur
	if req.Changed() {
		r.res.Body, r.res.Changed = req.Encode(), true
	}
	return r.res, nil
}

// run is one Pipeline.Run in progress: the request as the steps so far left
// it, and its pressure.
type run struct {
	p     *Pipeline
	in    Input
	req   *anthropic.Request
	model string
	res   Result
	cur   Tokens // pressure after the last step that changed the request
	snap  snapshot
	cache *cachePlan // nil: every step runs on pressure alone (no warm cache, or scheduling off)
	cold  bool       // the session's cache was seen and has gone cold
	moved bool       // Layer 1 moved its boundary in this run
	// rewrite is what the step running re-writes in the cache, for its Stats.
	rewrite int
}

func (p *Pipeline) newRun(in Input, req *anthropic.Request) *run {
	r := &run{p: p, in: in, req: req, model: in.Model, res: Result{Body: in.Body}}
	if r.model == "" {
		r.model = req.Model
	}
	r.res.family = Family(r.model)
	r.res.Limit = in.Limit
	if r.res.Limit <= 0 {
		r.res.Limit = p.o.Limits.For(r.model, in.Betas)
	}
	r.res.Before, r.res.profile = r.count(req)
	r.cur = r.res.Before
	st, seen := p.cache.get(in.Session)
	r.cold = seen && !p.o.Cache.Off && !st.Warm(p.o.Now())
	if seen && !p.o.Cache.Off && st.Warm(p.o.Now()) {
		r.cache = &cachePlan{o: p.o.Cache, left: st.Left(p.o.Now()), factor: 1,
			prev: p.o.Calibrator.anchorOf(in.Session)}
		if !p.o.NoCalibration {
			r.cache.factor = p.o.Calibrator.Factor(r.res.family)
		}
	}
	return r
}

// deferring reports whether a lossy step must pay for the cache re-write it causes: the cache
// is warm and the pressure below the force ratio.
func (r *run) deferring() bool { return r.cache != nil && !r.above(r.p.o.Cache.ForceRatio) }

// mayWait reports whether a step may wait, leaving the request as held describes it: the cache
// is warm and that request is below the force ratio. (The request as received may be far
// above: the client sends its whole history, and what is held back is only the next move.)
func (r *run) mayWait(held *Profile) bool {
	if r.cache == nil {
		return false
	}
	t := r.p.count.CountProfile(r.in.Session, r.res.family, held)
	return float64(t.Calibrated) <= r.p.o.Cache.ForceRatio*float64(r.res.Limit)
}

// profileOf profiles the request with msgs as its messages.
func (r *run) profileOf(msgs []anthropic.Message) *Profile {
	tmp := *r.req
	tmp.Messages = msgs
	return r.p.count.Profile(&tmp)
}

// deferStep records a step that waits for the cache to go cold.
func (r *run) deferStep(layer Layer, saves, rewrite int) {
	reason := r.cache.deferral(saves, rewrite)
	r.res.Stats = append(r.res.Stats, Stats{Layer: layer, TokensBefore: r.cur.Calibrated, TokensAfter: r.cur.Calibrated, Deferred: reason})
	r.p.o.Logger.Info("["+string(layer)+"] "+reason, "session", r.in.Session, "model", r.model)
}

// trim is Layer 1. A boundary move that does not pay for its cache re-write waits; the
// remembered boundary is held meanwhile, so the prefix stays what the cache holds.
func (r *run) trim() (int, bool, error) {
	p, req, session := r.p, r.req, r.in.Session
	th := p.o.Thresholds
	urgent := r.over(th.L2)
	if r.cold {
		urgent = nil // the prefix is written again anyway: a pending move costs nothing now
	}
	plan := p.l1.plan(req, session, r.over(th.L1), urgent)
	move := plan.move
	if move && r.cache != nil {
		held, moved := r.profileOf(plan.held), r.profileOf(plan.moved)
		ok, rewrite := r.cache.pays(held, moved)
		ok = ok || !r.mayWait(held)
		if !ok {
			move = false
			r.deferStep(Layer1Trim, int((held.Raw()-moved.Raw())*r.cache.factor+0.5), rewrite)
		} else {
			r.rewrite = rewrite
		}
	}
	r.moved = move && plan.cut > plan.heldCut
	return p.l1.commit(req, session, plan, move), false, nil
}

// fold folds duplicate tool results: anew at a fold moment (fresh), recording the folds for the
// session; otherwise repeating the session's recorded folds, which keeps the prefix the cache
// holds.
func (r *run) fold(fresh bool) int {
	o := r.p.o.Dedupe
	session := r.in.Session
	if !fresh && session != "" {
		o.Replay, _ = r.p.folds.get(session)
		if o.Replay == nil {
			return 0
		}
		return FoldDuplicateResults(r.req, o)
	}
	o.Record = Folds{}
	n := FoldDuplicateResults(r.req, o)
	if session != "" {
		r.p.folds.put(session, o.Record)
	}
	return n
}

// elide is Layer 2. Eliding further than the last forwarded request did changes messages the
// cache holds; while it does not pay for that, the elision stays where it was.
func (r *run) elide() (int, bool, error) {
	p, req, session := r.p, r.req, r.in.Session
	protect := p.o.ProtectLastMessages
	if r.cache == nil || session == "" {
		n := ElideThinking(req, protect)
		if session != "" {
			p.elided.put(session, elisionBound(req, protect))
		}
		return n, false, nil
	}
	bound, _ := p.elided.get(session)
	full, held := req.Clone(), req.Clone()
	nFull, nHeld := ElideThinking(full, protect), elideThinking(held, protect, bound)
	if nFull > nHeld {
		heldP, fullP := r.profileOf(held.Messages), r.profileOf(full.Messages)
		ok, rewrite := r.cache.pays(heldP, fullP)
		if !ok && r.mayWait(heldP) {
			req.Messages = held.Messages
			r.deferStep(Layer2Thinking, int((heldP.Raw()-fullP.Raw())*r.cache.factor+0.5), rewrite)
			return nHeld, false, nil
		}
		r.rewrite = rewrite
	}
	req.Messages = full.Messages
	p.elided.put(session, elisionBound(req, protect))
	return nFull, false, nil
}

// deferSummary reports whether a new Layer-3 summary waits: a fork re-writes everything after
// the system prompt, so while the cache is warm it runs only when the smaller request it leaves
// pays for that. The fork's size is estimated before any summary call is made: the verbatim
// tail plus a summary the size of the session's last one (or summaryTokensGuess).
func (r *run) deferSummary(orig []anthropic.Message) bool {
	if !r.deferring() {
		return false
	}
	cur := r.res.profile
	e := r.p.count.opts.Estimator
	summary := float64(summaryTokensGuess)
	if entry, ok := r.p.l3.cache.get(r.in.Session); ok {
		summary = float64(len(entry.summary)) / 4
	}
	tail := 0.0
	for i := tailStart(orig); i < len(orig); i++ {
		tail += e.Message(&orig[i])
	}
	f := r.cache.factor
	after := (cur.fixed + summary + tail) * f
	before := cur.Raw() * f
	if r.cache.cost(after, after-cur.fixed*f) <= r.cache.cost(before, r.cache.rewrite(cur)*f) {
		return false
	}
	r.deferStep(Layer3Summary, int(before-after+0.5), int(after-cur.fixed*f+0.5))
	return true
}

// summaryTokensGuess is the size of a summary not written yet, for deciding whether to write one.
const summaryTokensGuess = 2000

// count estimates req for this run's session and model family.
func (r *run) count(req *anthropic.Request) (Tokens, *Profile) {
	prof := r.p.count.Profile(req)
	return r.p.count.CountProfile(r.in.Session, r.res.family, prof), prof
}

func (r *run) above(t float64) bool { return float64(r.cur.Calibrated) > t*float64(r.res.Limit) }

// over returns a test of whether a request is still above threshold t, for
// the steps that trim until it is not.
func (r *run) over(t float64) func(*anthropic.Request) bool {
	return func(req *anthropic.Request) bool {
		tk, _ := r.count(req)
		return float64(tk.Calibrated) > t*float64(r.res.Limit)
	}
}

// step runs one layer; when it changed something (items > 0) it counts the
// request again, records Stats and logs the [Layer] line.
func (r *run) step(layer Layer, apply func() (items int, hit bool, err error)) error {
	start := r.p.o.Now()
	r.snap, r.rewrite = takeSnapshot(r.snap, r.req.Messages), 0
	items, hit, err := apply()
	if err != nil || items == 0 {
		return err
	}
	after, prof := r.count(r.req)
	st := Stats{Layer: layer, TokensBefore: r.cur.Calibrated, TokensAfter: after.Calibrated,
		RawBefore: r.cur.Raw, RawAfter: after.Raw, Items: items, Duration: r.p.o.Now().Sub(start), CacheHit: hit,
		Edits: diffStep(layer, r.snap, r.req.Messages, r.res.profile, prof), Rewrite: r.rewrite}
	r.rewrite = 0
	r.res.Stats = append(r.res.Stats, st)
	r.p.o.Logger.Info("["+string(layer)+"] "+layerVerb[layer], "session", r.in.Session, "model", r.model, "items", items,
		"tokens_before", st.TokensBefore, "tokens_after", st.TokensAfter, "raw_before", st.RawBefore, "raw_after", st.RawAfter,
		"limit", r.res.Limit, "summary_cache_hit", hit, "took", st.Duration)
	r.cur, r.res.profile = after, prof
	return nil
}

// repairSignatures is the signature step, logging each kind of repair.
func (r *run) repairSignatures() (int, bool, error) {
	rep := RepairSignatures(r.req, r.p.o.Signatures, r.in.Session, r.res.family, r.p.o.Repair)
	r.res.Repair = rep
	log := r.p.o.Logger
	if n := rep.FromSession; n > 0 {
		log.Info("Recovered signature from SESSION cache", "session", r.in.Session, "model", r.model, "count", n)
	}
	if n := rep.FromTool; n > 0 {
		log.Info("Recovered signature from TOOL cache", "session", r.in.Session, "model", r.model, "count", n)
	}
	if n := rep.CrossModel; n > 0 {
		log.Info("Dropped thinking signed by another model family", "session", r.in.Session, "model", r.model, "count", n)
	}
	return rep.Items(), false, nil
}

// summarize runs Layer 3 on the history orig and fails the run when the
// summary cannot be had or does not make the request fit.
func (r *run) summarize(ctx context.Context, orig []anthropic.Message) error {
	err := r.step(Layer3Summary, func() (int, bool, error) {
		res, err := r.p.l3.Extend(ctx, r.req, orig, r.in.Session)
		return res.Summarized, res.CacheHit, err
	})
	if left := r.cur.Best; err == nil && left > r.res.Limit {
		// Nothing left to summarise, or a summary that does not make
		// room: forwarding would only fail upstream, less helpfully.
		err = fmt.Errorf("%w: about %d tokens remain after compaction, over the %d-token window",
			ErrSummaryFailed, left, r.res.Limit)
	}
	if err != nil {
		r.res.After = r.cur
		r.p.o.Logger.Warn("[Layer-3] summary failed; the request is refused", "session", r.in.Session, "model", r.model,
			"tokens", r.cur.Calibrated, "limit", r.res.Limit, "err", err)
	}
	return err
}

var layerVerb = map[Layer]string{
	LayerSignatures:  "repaired thinking signatures",
	LayerToolResults: "compressed tool results",
	LayerDedupe:      "folded duplicate tool results into their newest copy",
	LayerPurify:      "removed thinking for a model without thinking support",
	Layer1Trim:       "trimmed old tool rounds",
	Layer2Thinking:   "elided old thinking, signatures kept",
	Layer3Summary:    "forked the conversation onto a summary",
}

// Learn feeds the upstream's real input token count for the request res
// forwarded (input + cache read + cache write) to the calibrator: the
// family's factor and the session's anchor. It never touches the request's
// bytes, so it may run after they were released.
func (p *Pipeline) Learn(res Result, session string, real int) {
	if p.o.NoCalibration || res.profile == nil || real <= 0 {
		return
	}
	before := p.o.Calibrator.Factor(res.family)
	after := p.o.Calibrator.Observe(res.family, res.profile.Raw(), real)
	p.o.Calibrator.SetAnchorProfile(session, res.profile, real)
	p.o.Logger.Debug("calibration", "family", res.family, "session", session, "raw", int(res.profile.Raw()),
		"estimated", res.After.Calibrated, "real", real, "factor_before", before, "factor_after", after)
}

// Count is the best estimate of a request's input tokens, for answering
// count_tokens without an upstream: calibrated (or anchored on the session's
// last real count), without the safety margin decisions use.
func (p *Pipeline) Count(body []byte, model, session string) (int, error) {
	req, err := anthropic.ParseRequest(body)
	if err != nil {
		return 0, err
	}
	if model == "" {
		model = req.Model
	}
	return p.count.CountProfile(session, Family(model), p.count.Profile(req)).Best, nil
}

// Thresholds returns the thresholds in use (defaults filled in).
func (p *Pipeline) Thresholds() Thresholds { return p.o.Thresholds }

// Limit returns the context window the pipeline assumes for model.
func (p *Pipeline) Limit(model string, betas []string) int { return p.o.Limits.For(model, betas) }

// Window returns the context window the pipeline assumes for model, and where it comes from.
func (p *Pipeline) Window(model string, betas []string) Window {
	return p.o.Limits.Explain(model, betas)
}

// IsSummaryFailure reports whether err is a Layer-3 failure the proxy should
// answer with HTTP 400 and SummaryFailedMessage.
func IsSummaryFailure(err error) bool { return errors.Is(err, ErrSummaryFailed) }
