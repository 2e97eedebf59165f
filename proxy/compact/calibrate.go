package compact

import (
	"container/list"
	"hash/maphash"
	"strings"
	"sync"

	"longhaul/proxy/anthropic"
)

// Calibration defaults.
const (
	DefaultCalibrationAlpha = 0.2 // EMA weight of a new observation
	MinCalibration          = 0.5
	MaxCalibration          = 2.0
	defaultAnchorSessions   = 1024
)

// Family names the tokenizer family of a model: calibration factors and
// signatures are kept per family, not per model version.
func Family(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 { // "anthropic/claude-…"
		m = m[i+1:]
	}
	for _, f := range []string{"claude", "gemini", "gpt", "o1", "o3", "o4", "deepseek", "qwen", "glm", "kimi"} {
		if strings.HasPrefix(m, f) {
			return f
		}
	}
	if i := strings.IndexAny(m, "-_.:"); i > 0 {
		return m[:i]
	}
	return m
}

// CalibratorOptions configures a Calibrator. The zero value uses the defaults.
type CalibratorOptions struct {
	Alpha          float64 // EMA weight; 0 = DefaultCalibrationAlpha
	Min, Max       float64 // clamp range; 0 = MinCalibration / MaxCalibration
	AnchorSessions int     // sessions with a remembered anchor; 0 = 1024
	Estimator      Estimator
}

// Calibrator corrects the estimator with what the upstream really counted.
// Per model family it keeps factor = real / raw estimate, smoothed (EMA) and
// clamped; per session it keeps an anchor: the real input tokens of the
// request last forwarded, which covers the prefix the client sends again, so
// only the new tail needs estimating. Safe for concurrent use.
type Calibrator struct {
	opts CalibratorOptions
	seed maphash.Seed

	mu      sync.Mutex
	factors map[string]float64
	anchors map[string]*list.Element // session → *anchor in lru
	lru     list.List
}

type anchor struct {
	session string
	header  uint64    // hash of every top-level member but messages
	hashes  []uint64  // hashes[i]: running hash of messages[:i+1]
	raws    []float64 // raws[i]: raw estimate of messages[:i+1]
	real    int       // real input tokens of the whole request
	// bytes is the request's size. An anchor set from a request the engine never parsed (the
	// screen let it through) has only that and no hashes: the next request of the session,
	// the same conversation a little longer, costs real × its size / bytes.
	bytes int
}

// NewCalibrator returns a Calibrator with every factor at 1.
func NewCalibrator(opts CalibratorOptions) *Calibrator {
	if opts.Alpha <= 0 || opts.Alpha > 1 {
		opts.Alpha = DefaultCalibrationAlpha
	}
	if opts.Min <= 0 {
		opts.Min = MinCalibration
	}
	if opts.Max <= 0 {
		opts.Max = MaxCalibration
	}
	if opts.AnchorSessions <= 0 {
		opts.AnchorSessions = defaultAnchorSessions
	}
	return &Calibrator{opts: opts, seed: maphash.MakeSeed(),
		factors: map[string]float64{}, anchors: map[string]*list.Element{}}
}

func (c *Calibrator) clamp(f float64) float64 { return min(max(f, c.opts.Min), c.opts.Max) }

// Factor returns the calibration factor of a family (1 when unknown).
func (c *Calibrator) Factor(family string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.factors[family]; ok {
		return f
	}
	return 1
}

// Observe feeds one reply: raw is the raw estimate of the request forwarded,
// real the tokens the upstream counted for it (input_tokens plus
// cache_creation_input_tokens plus cache_read_input_tokens — the usage
// splits one prompt three ways). It returns the new factor.
func (c *Calibrator) Observe(family string, raw float64, real int) float64 {
	if raw <= 0 || real <= 0 {
		return c.Factor(family)
	}
	sample := c.clamp(float64(real) / raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.factors[family]
	if !ok {
		f = sample // the first observation beats the neutral guess
	} else {
		f = c.clamp(f + c.opts.Alpha*(sample-f))
	}
	c.factors[family] = f
	return f
}

// Snapshot returns the factors for persisting.
func (c *Calibrator) Snapshot() map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]float64, len(c.factors))
	for k, v := range c.factors {
		out[k] = v
	}
	return out
}

// Restore loads persisted factors, clamped; it replaces those it names.
func (c *Calibrator) Restore(factors map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range factors {
		if v > 0 {
			c.factors[k] = c.clamp(v)
		}
	}
}

// Tokens is a pressure reading.
type Tokens struct {
	Raw        int  // heuristic count, no margin, no calibration
	Calibrated int  // what decisions use: calibrated (or anchored) plus margin
	Anchored   bool // part of Calibrated is the upstream's real count
	// Best is the best guess of what the upstream will count: Calibrated without the margin,
	// which applies only to the estimated part of an anchored count.
	Best int
}

// Profile is what the calibrator needs to know about one request: its raw
// estimate and a running hash per message. It holds no reference to the
// request's bytes, so it can outlive a pooled body buffer (the anchor is set
// after the reply, when the buffer may be gone).
type Profile struct {
	header uint64    // hash of what the prompt holds besides messages
	fixed  float64   // raw estimate of system and tools
	hashes []uint64  // hashes[i]: running hash of messages[:i+1]
	raws   []float64 // raws[i]: raw estimate of messages[:i+1]
	bytes  int       // the request's size; 0 when unknown (an edited request)
}

// Raw is the request's raw estimate (no margin, no calibration).
func (p *Profile) Raw() float64 {
	if n := len(p.raws); n > 0 {
		return p.fixed + p.raws[n-1]
	}
	return p.fixed
}

// Profile measures r in one pass.
func (c *Calibrator) Profile(r *anthropic.Request) *Profile {
	e := c.opts.Estimator
	p := &Profile{header: c.headerHash(r), fixed: textTokens(r.System) + textTokens(r.Tools),
		hashes: make([]uint64, len(r.Messages)), raws: make([]float64, len(r.Messages)), bytes: r.Size()}
	if r.Changed() {
		// Size is the body r was parsed from, not what a compaction step left of it: taken for
		// the edited request's size, a size anchor would count it at the unedited request's
		// cost, every step would look like it saved nothing, and the pipeline would refuse a
		// request it had in fact made fit.
		p.bytes = 0
	}
	var h maphash.Hash
	h.SetSeed(c.seed)
	var sum float64
	for i := range r.Messages {
		h.Write(r.Messages[i].Raw())
		p.hashes[i] = h.Sum64()
		sum += e.Message(&r.Messages[i])
		p.raws[i] = sum
	}
	return p
}

// Count estimates r for session and family. With an anchor whose system,
// tools and leading messages match r, the matched prefix is taken at its real
// count and only the rest is estimated.
func (c *Calibrator) Count(session, family string, r *anthropic.Request) Tokens {
	return c.CountProfile(session, family, c.Profile(r))
}

// CountProfile is Count for a request already profiled.
func (c *Calibrator) CountProfile(session, family string, p *Profile) Tokens {
	e := c.opts.Estimator
	raw := p.Raw()
	factor := c.Factor(family)
	t := Tokens{Raw: int(raw + 0.5), Calibrated: e.WithMargin(raw * factor), Best: int(raw*factor + 0.5)}
	if session == "" {
		return t
	}
	c.mu.Lock()
	el, ok := c.anchors[session]
	var a *anchor
	if ok {
		a = el.Value.(*anchor)
	}
	c.mu.Unlock()
	if a == nil || a.header != p.header {
		return t
	}
	if len(a.hashes) == 0 {
		return sizeAnchored(t, a, p, e)
	}
	// Longest prefix of messages unchanged since the anchor.
	k := 0
	for k < len(a.hashes) && k < len(p.hashes) && a.hashes[k] == p.hashes[k] {
		k++
	}
	if k == 0 {
		return t
	}
	// real covers the anchored request; take away the part of it that
	// changed (at its calibrated estimate) and add what is new.
	gone := (a.raws[len(a.raws)-1] - a.raws[k-1]) * factor
	tail := (p.raws[len(p.raws)-1] - p.raws[k-1]) * factor
	anchored := float64(a.real) - gone
	if anchored < 0 {
		return t
	}
	t.Calibrated = int(anchored+0.5) + e.WithMargin(tail)
	t.Best = int(anchored + tail + 0.5)
	t.Anchored = true
	return t
}

// sizeAnchored counts a request from an anchor that has only a size: the session's previous
// request, which the screen let through unparsed. A request no larger is not taken to extend
// it (it was compacted, or is another conversation).
func sizeAnchored(t Tokens, a *anchor, p *Profile, e Estimator) Tokens {
	if a.bytes <= 0 || p.bytes < a.bytes {
		return t
	}
	perByte := float64(a.real) / float64(a.bytes)
	if perByte < 1.0/6 || perByte > 1.0/2 {
		perByte = 0.25 // not text-like (a long base64 payload): the tail at 4 bytes a token
	}
	tail := float64(p.bytes-a.bytes) * perByte
	t.Calibrated = a.real + e.WithMargin(tail)
	t.Best = a.real + int(tail+0.5)
	t.Anchored = true
	return t
}

// SetSizeAnchor records that a request of session the engine did not parse (the screen let it
// through), of size bytes and with header (HeaderHash of its system and tools), really cost
// real input tokens: the anchor of a session whose requests are all far below the thresholds.
//
// A count under a token per 16 bytes is not taken: no text tokenizes that sparsely, so the
// upstream is not counting these bytes (a gateway reporting zero or a fixed figure).
func (c *Calibrator) SetSizeAnchor(session string, header uint64, bytes, real int) {
	if session == "" || real <= 0 || bytes <= 0 || real*16 < bytes {
		return
	}
	c.putAnchor(&anchor{session: session, header: header, real: real, bytes: bytes})
}

// anchorOf returns session's anchor (nil when none).
func (c *Calibrator) anchorOf(session string) *anchor {
	if session == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.anchors[session]; ok {
		return el.Value.(*anchor)
	}
	return nil
}

// SetAnchor records that r, as forwarded for session, really cost real input
// tokens (all three usage fields summed).
func (c *Calibrator) SetAnchor(session string, r *anthropic.Request, real int) {
	c.SetAnchorProfile(session, c.Profile(r), real)
}

// SetAnchorProfile is SetAnchor for a request already profiled.
func (c *Calibrator) SetAnchorProfile(session string, p *Profile, real int) {
	if session == "" || real <= 0 || p == nil {
		return
	}
	c.putAnchor(&anchor{session: session, header: p.header, real: real, hashes: p.hashes, raws: p.raws, bytes: p.bytes})
}

func (c *Calibrator) putAnchor(a *anchor) {
	session := a.session
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.anchors[session]; ok {
		el.Value = a
		c.lru.MoveToFront(el)
		return
	}
	c.anchors[session] = c.lru.PushFront(a)
	for c.lru.Len() > c.opts.AnchorSessions {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.anchors, old.Value.(*anchor).session)
	}
}

// headerHash covers what the anchor's count includes besides messages;
// model, max_tokens and stream do not change the prompt and are skipped so a
// model switch keeps the anchor.
func (c *Calibrator) headerHash(r *anthropic.Request) uint64 { return c.HeaderHash(r.System, r.Tools) }

// HeaderHash is the hash an anchor keeps of a request's system prompt and tools (raw JSON, as
// in the body): what its count includes besides messages.
func (c *Calibrator) HeaderHash(system, tools []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.Write(system)
	h.WriteByte(0)
	h.Write(tools)
	return h.Sum64()
}
