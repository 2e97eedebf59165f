package pool

import (
	"errors"
	"slices"
	"time"
)

// Account is an upstream credential the proxy can forward to, as the store
// holds it. The store's row is the one owner of Enabled: the pool never
// changes it, it only stops using an account the upstream refused until the
// next SetAccounts says what the store decided (see Pool.SetAccounts).
type Account struct {
	ID      int64
	Label   string
	Kind    string // KindAnthropic, KindOpenAI, KindOpenAIResponses or KindGemini; "" is KindAnthropic
	BaseURL string // e.g. https://api.anthropic.com
	Secret  string
	Enabled bool
	Models  []string // allow-list (exact names or * patterns); empty means any model
	// Priority orders fill-first (higher first); Weight drives the weighted policy.
	Priority, Weight int
}

// Account kinds: the protocol an account's upstream speaks, which decides what is sent to it.
const (
	KindAnthropic       = "anthropic"        // Messages API at BaseURL + /v1/messages
	KindOpenAI          = "openai"           // Chat Completions at BaseURL + /chat/completions
	KindOpenAIResponses = "openai-responses" // Responses at BaseURL + /responses
	KindGemini          = "gemini"           // generativelanguage API at BaseURL + /v1beta/models/…
)

// Kinds lists every account kind, in the order a UI offers them.
var Kinds = []string{KindAnthropic, KindOpenAI, KindOpenAIResponses, KindGemini}

// KindOf is a's kind with the default filled in.
func (a Account) KindOf() string {
	if a.Kind == "" {
		return KindAnthropic
	}
	return a.Kind
}

// MaskedSecret shows enough of a secret to recognise it and no more.
func MaskedSecret(secret string) string {
	if len(secret) < 12 {
		return "…"
	}
	return secret[:3] + "…" + secret[len(secret)-4:]
}

// Name is how an account appears in logs and the monitor: never the secret.
func (a Account) Name() string {
	if a.Label != "" {
		return a.Label
	}
	return MaskedSecret(a.Secret)
}

// Pick describes the request an account is chosen for.
type Pick struct {
	Model     string
	SessionID string
	// Exclude lists accounts that already failed this request.
	Exclude []int64
	// ModelMap routes the model: an entry with Account set sends it to the accounts it names
	// (see preference). nil: the model's family decides among the kinds configured.
	ModelMap []ModelMapping
	// Kinds, when not empty, limits the pick to accounts of these kinds.
	Kinds []string
	// Only, when not 0, limits the pick to that account (a replay on a chosen account).
	Only int64
}

// serves reports whether a may take the pick: of an allowed kind, and its model allow-list
// admits the model as the client named it or as the model map renames it for a.
func (p *Pick) serves(a Account) bool {
	if !p.fits(a) {
		return false
	}
	if serves(a, p.Model) {
		return true
	}
	mapped, ok := MapModel(p.ModelMap, p.Model, a)
	return ok && serves(a, mapped)
}

// sent is the model a would be sent: the model map's choice for a, else the model as asked.
// An account's cooldowns are kept by the model it was sent, so a failing mapped model does not
// cool down the account's other models, and two names mapped to one model share its health.
func (p *Pick) sent(a Account) string {
	m, _ := MapModel(p.ModelMap, p.Model, a)
	return m
}

// fits reports whether a is of a kind the pick allows.
func (p *Pick) fits(a Account) bool {
	return (p.Only == 0 || a.ID == p.Only) && (len(p.Kinds) == 0 || slices.Contains(p.Kinds, a.KindOf()))
}

// ErrNoAccount means no account can serve the request; *NoAccountError says why.
var ErrNoAccount = errors.New("no usable upstream account")

// NoAccountError explains why no account was picked and, when accounts are
// only cooling down, how long until the soonest is back.
type NoAccountError struct {
	Reason     string
	RetryAfter time.Duration
	// Unserved: no enabled account serves the model at all (a 404 to the client, not a 503).
	Unserved bool
}

func (e *NoAccountError) Error() string { return e.Reason }
func (e *NoAccountError) Unwrap() error { return ErrNoAccount }
