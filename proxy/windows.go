package proxy

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
	"longhaul/proxy/compact"
	"longhaul/proxy/pool"
)

// target is what a request is compacted for: the model an account is sent (after the model
// map), the context window that applies on that account, and whether the model thinks. Each
// attempt has its own; when it differs from the one the request was compacted for, the request
// is compacted again for it.
type target struct {
	model      string
	window     compact.Window
	noThinking bool
}

// target returns the target of a request sent to account acct (0: not known yet) as model.
func (c *compactor) target(model string, acct int64, betas []string, learned *learnedWindows) target {
	w := c.pipe.Window(model, betas)
	if n, ok := learned.get(acct, model); ok && n < w.Tokens {
		w = compact.Window{Tokens: n, Source: compact.WindowLearned}
	}
	return target{model: model, window: w, noThinking: !compact.SupportsThinking(model)}
}

// guessTarget is the target before an account is picked: the model map's global choice, or
// the one for the account the session is bound to, whose learned window then applies too.
func (s *Server) guessTarget(cfg *Config, comp *compactor, model, session string, betas []string) target {
	acct, _ := s.pool.Bound(session, s.now())
	sent, _ := pool.MapModel(cfg.ModelMap, model, acct)
	return comp.target(sent, acct.ID, betas, s.windows)
}

// learnedWindows are the context windows upstreams showed by refusing a longer request, per
// (account, model sent): a window the configuration overstated (a gateway serving a smaller
// variant, a local model loaded with a short context) is used from then on. Bounded: at most
// maxLearnedWindows pairs, the oldest forgotten first.
type learnedWindows struct {
	mu sync.Mutex
	m  map[windowKey]LearnedWindow
}

type windowKey struct {
	account int64
	model   string
}

// LearnedWindow is a context window an upstream revealed.
type LearnedWindow struct {
	AccountID int64
	Model     string
	Tokens    int
	At        time.Time
}

const maxLearnedWindows = 1024

// minLearnedWindow bounds a learned window from below: no model worth serving has less, and a
// refusal read wrong must not shrink every later request of the account to nothing.
const minLearnedWindow = 4096

func newLearnedWindows() *learnedWindows {
	return &learnedWindows{m: map[windowKey]LearnedWindow{}}
}

func (w *learnedWindows) get(acct int64, model string) (int, bool) {
	if w == nil || acct == 0 {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	lw, ok := w.m[windowKey{acct, strings.ToLower(model)}]
	return lw.Tokens, ok
}

// learn keeps tokens as the window of (acct, model), or the smaller of it and what was known.
func (w *learnedWindows) learn(acct int64, model string, tokens int, now time.Time) {
	tokens = max(tokens, minLearnedWindow)
	w.mu.Lock()
	defer w.mu.Unlock()
	k := windowKey{acct, strings.ToLower(model)}
	if old, ok := w.m[k]; ok && old.Tokens <= tokens {
		return
	}
	if len(w.m) >= maxLearnedWindows {
		var oldest windowKey
		first := true
		for k, v := range w.m {
			if first || v.At.Before(w.m[oldest].At) {
				oldest, first = k, false
			}
		}
		delete(w.m, oldest)
	}
	w.m[k] = LearnedWindow{AccountID: acct, Model: model, Tokens: tokens, At: now}
}

func (w *learnedWindows) all() []LearnedWindow {
	w.mu.Lock()
	out := make([]LearnedWindow, 0, len(w.m))
	for _, v := range w.m {
		out = append(out, v)
	}
	w.mu.Unlock()
	slices.SortFunc(out, func(a, b LearnedWindow) int {
		if c := strings.Compare(a.Model, b.Model); c != 0 {
			return c
		}
		return int(a.AccountID - b.AccountID)
	})
	return out
}

// LearnedWindows lists the context windows upstreams revealed, for the session view.
func (s *Server) LearnedWindows() []LearnedWindow { return s.windows.all() }

// How each API words a prompt over its window (read from their error replies, translated into
// Messages terms by the upstream protocol):
//
//	Anthropic: "prompt is too long: 205000 tokens > 200000 maximum"
//	OpenAI:    "This model's maximum context length is 128000 tokens. However, your messages
//	            resulted in 130000 tokens…" (code context_length_exceeded; some servers give no numbers)
//	Gemini:    "The input token count (1234567) exceeds the maximum number of tokens allowed (1048576)."
var (
	tooLongAnthropic = regexp.MustCompile(`(\d+) tokens > (\d+) maximum`)
	tooLongOpenAI    = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	tooLongGemini    = regexp.MustCompile(`maximum number of tokens allowed \((\d+)\)`)
	tooLongWords     = []string{"prompt is too long", "context_length_exceeded", "maximum context length",
		"exceeds the context window", "context window", "input token count", "too many tokens"}
)

// tooLong reports whether an upstream refused the request as longer than its window, and the
// window when the error names it (0 when it does not).
func (f *upstreamFailure) tooLong() (window int, ok bool) {
	if f.status != http.StatusBadRequest && f.status != http.StatusRequestEntityTooLarge {
		return 0, false
	}
	msg := f.message()
	for _, re := range []*regexp.Regexp{tooLongAnthropic, tooLongOpenAI, tooLongGemini} {
		if m := re.FindStringSubmatch(msg); m != nil {
			n, err := strconv.Atoi(m[len(m)-1])
			return n, err == nil && n > 0
		}
	}
	lower := strings.ToLower(msg + " " + string(anthropic.MemberValue(anthropic.MemberValue(f.body, "error"), "code")))
	for _, w := range tooLongWords {
		if strings.Contains(lower, w) {
			return 0, true
		}
	}
	return 0, false
}

// windowFromRefusal is the window to learn from a refusal that did not name one: a tenth below
// what was sent, by the best count at hand.
func windowFromRefusal(ex *Exchange, sentBytes int) int {
	sent := ex.TokensAfter
	if sent <= 0 {
		sent = sentBytes / 4
	}
	return sent * 9 / 10
}
