package proxytest

import "fmt"

// Simulation is what an Upstream models of the real API beyond its script. The zero value
// models nothing: replies carry the scripted Message's usage, as they always did.
type Simulation struct {
	// CountTokens makes the upstream count each request with CountTokens: a reply's
	// usage.input_tokens is that count (the scripted output_tokens stay), and
	// /v1/messages/count_tokens answers it.
	CountTokens bool
	// Caching simulates the prompt cache (implies CountTokens): a reply's usage splits the
	// count into input_tokens, cache_read_input_tokens and cache_creation_input_tokens, and a
	// request with more than 4 cache_control blocks is refused as the API refuses it. nil = no
	// cache.
	Caching *CacheSim
	// Window is the model's context window (implies CountTokens): a request counted above it
	// is refused before any reply starts, with the API's 400 invalid_request_error "prompt is
	// too long: N tokens > M maximum". 0 = no window. (The API also refuses input plus
	// max_tokens beyond the window; that is not modelled.)
	Window int
}

// counting reports whether the upstream counts requests at all.
func (s Simulation) counting() bool { return s.CountTokens || s.Caching != nil || s.Window > 0 }

// SetSimulation sets what the upstream simulates for the requests that arrive from now on.
func (u *Upstream) SetSimulation(s Simulation) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sim = s
}

func (u *Upstream) simulation() Simulation {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sim
}

// noteTokens records the upstream's count of a request and the usage it reported.
func (u *Upstream) noteTokens(rec *Received, tokens int, usage *Usage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec.Tokens = tokens
	if usage != nil {
		rec.Usage = usage
	}
}

// withUsage is a copy of m reporting usage: a new Message, since a served one is never mutated
// (its rendering is cached per pointer).
func (m *Message) withUsage(usage Usage) *Message {
	c := *m
	c.Usage = usage
	return &c
}

// usage is what a reply to p reports: the scripted output, the simulated input.
func (s Simulation) usage(p *prompt, scripted Usage) Usage {
	if s.Caching != nil {
		return s.Caching.use(p, scripted.OutputTokens)
	}
	return Usage{InputTokens: p.tokens(), OutputTokens: scripted.OutputTokens}
}

// refusal is the API's 400 message for a request the simulation refuses, or "".
func (s Simulation) refusal(p *prompt) string {
	if n := p.tokens(); s.Window > 0 && n > s.Window {
		return PromptTooLong(n, s.Window)
	}
	if n := p.breakpoints(); s.Caching != nil && n > maxBreakpoints {
		return fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxBreakpoints, n)
	}
	return ""
}

// PromptTooLong is the message of Anthropic's 400 invalid_request_error for a prompt of tokens
// beyond a window of maximum, as the API words it (seen in client reports: "prompt is too long:
// 219898 tokens > 200000 maximum", the body {"type":"error","error":{"type":
// "invalid_request_error","message":…},"request_id":…}).
func PromptTooLong(tokens, maximum int) string {
	return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, maximum)
}
