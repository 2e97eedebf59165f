package pool

import "fmt"

// Rotation policies, by the names the setting proxy.rotation.policy uses.
const (
	PolicyRoundRobin = "round-robin"
	PolicyFillFirst  = "fill-first"
	PolicyLeastUsed  = "least-used"
	PolicyWeighted   = "weighted"
)

// Candidate is an available account as a Selector sees it.
type Candidate struct {
	Account
	// Requests is how many requests the account served in the usage window.
	Requests int64
	// Tokens is how many tokens it used in the usage window.
	Tokens int64
}

// Selector chooses one of the available candidates (never empty), returning
// its index. It is called with the pool's lock held, so it may keep state.
type Selector interface {
	Select(candidates []Candidate) int
}

// NewSelector returns the selector for a policy name.
func NewSelector(policy string) (Selector, error) {
	switch policy {
	case PolicyRoundRobin, "":
		return &roundRobin{}, nil
	case PolicyFillFirst:
		return fillFirst{}, nil
	case PolicyLeastUsed:
		return leastUsed{}, nil
	case PolicyWeighted:
		return &weighted{current: map[int64]int{}}, nil
	}
	return nil, fmt.Errorf("unknown rotation policy %q", policy)
}

// roundRobin takes turns by account id, so the order survives accounts
// becoming unavailable and coming back.
type roundRobin struct{ last int64 }

func (r *roundRobin) Select(c []Candidate) int {
	next, lowest := -1, 0
	for i, a := range c {
		if a.ID > r.last && (next < 0 || a.ID < c[next].ID) {
			next = i
		}
		if a.ID < c[lowest].ID {
			lowest = i
		}
	}
	if next < 0 {
		next = lowest
	}
	r.last = c[next].ID
	return next
}

// fillFirst uses the highest-priority account (then the oldest) until it is
// limited, which keeps one upstream prompt cache warm.
type fillFirst struct{}

func (fillFirst) Select(c []Candidate) int {
	best := 0
	for i, a := range c {
		if a.Priority > c[best].Priority || (a.Priority == c[best].Priority && a.ID < c[best].ID) {
			best = i
		}
	}
	return best
}

// leastUsed picks the account with the fewest requests in the window, then
// the fewest tokens, then the lowest id (deterministic).
type leastUsed struct{}

func (leastUsed) Select(c []Candidate) int {
	best := 0
	for i, a := range c {
		b := c[best]
		if a.Requests < b.Requests || (a.Requests == b.Requests && (a.Tokens < b.Tokens || (a.Tokens == b.Tokens && a.ID < b.ID))) {
			best = i
		}
	}
	return best
}

// weighted is nginx's smooth weighted round-robin: deterministic, and spreads
// picks evenly (weights 5,1,1 give a a b a c a a, not a a a a a b c).
type weighted struct{ current map[int64]int }

func (w *weighted) Select(c []Candidate) int {
	total, best := 0, 0
	for i, a := range c {
		weight := max(a.Weight, 1)
		total += weight
		w.current[a.ID] += weight
		if w.current[a.ID] > w.current[c[best].ID] {
			best = i
		}
	}
	w.current[c[best].ID] -= total
	if len(w.current) > 4*len(c)+16 { // forget removed accounts
		keep := make(map[int64]int, len(c))
		for _, a := range c {
			keep[a.ID] = w.current[a.ID]
		}
		w.current = keep
	}
	return best
}
