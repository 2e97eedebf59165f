package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"longhaul/app/tray"
	"longhaul/proxy"
	"longhaul/store"
)

// trayPressureWindow is how recently a session must have sent a request for the tray's
// pressure line to count it as active. Ten minutes is twice the 5-minute prompt-cache TTL
// the compaction timing works with: a session quiet for longer has a cold cache and is no
// longer the one the user is driving. It is long enough to span the pause while the user
// reads a reply and types the next turn, so the line does not drop to "no active session"
// between turns.
const trayPressureWindow = 10 * time.Minute

// sessionPressures holds the latest finished /v1/messages exchange of each recently active
// session, fed by the live feed's batches, so the tray's pressure line follows every
// finished exchange without a history query per request (and without racing the history
// writer, which may commit a record after the feed has published it).
type sessionPressures struct {
	mu     sync.Mutex
	latest map[string]store.Exchange // by session
}

func newSessionPressures() *sessionPressures {
	return &sessionPressures{latest: map[string]store.Exchange{}}
}

// countsForPressure reports whether e can be its session's latest request for the pressure
// line: what store.LatestExchange selects (a client's /v1/messages request, not a replay),
// finished, so its size and the upstream's count are known.
func countsForPressure(e store.Exchange) bool {
	return e.State == "finished" && e.Route == "messages" && e.SessionID != "" && e.ReplayOf == ""
}

// keep takes e as its session's latest exchange unless a later one is held; it reports
// whether it did.
func (s *sessionPressures) keep(e store.Exchange) bool {
	if !countsForPressure(e) {
		return false
	}
	if held, ok := s.latest[e.SessionID]; ok && held.Start.After(e.Start) {
		return false
	}
	s.latest[e.SessionID] = e
	return true
}

// load reads the latest exchange of every session active within the window from the
// history: the line is right from the start (and again after the feed dropped the tray
// for falling behind), before each session's next request.
func (s *sessionPressures) load(ctx context.Context, st *store.Store, now time.Time) error {
	sessions, err := st.Sessions(ctx, now.Add(-trayPressureWindow), 1000, nil) // no prices: only the ids are read
	if err != nil {
		return fmt.Errorf("load the tray's session pressures: %w", err)
	}
	var latest []store.Exchange
	for _, sess := range sessions {
		e, err := st.LatestExchange(ctx, sess.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue // a session of other routes only
		}
		if err != nil {
			return fmt.Errorf("load the tray's session pressures: %w", err)
		}
		latest = append(latest, e)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range latest {
		s.keep(e)
	}
	return nil
}

// observe takes a live batch (recorder.EventExchanges' data) and reports whether it changed
// any session's latest exchange.
func (s *sessionPressures) observe(batch json.RawMessage) (bool, error) {
	var es []store.Exchange
	if err := json.Unmarshal(batch, &es); err != nil {
		return false, fmt.Errorf("read a live history batch: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, e := range es {
		changed = s.keep(e) || changed
	}
	return changed, nil
}

// busiest is the pressure of the busiest session active at now under cfg's limits and
// thresholds; false when none is. Sessions that went quiet are forgotten here: the tray
// asks every few seconds, so one ages out of the line without an event.
func (s *sessionPressures) busiest(cfg proxy.Config, now time.Time) (Pressure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := make([]Pressure, 0, len(s.latest))
	for id, e := range s.latest {
		if !active(e.Start, now) {
			delete(s.latest, id)
			continue
		}
		ps = append(ps, pressureOf(e, cfg))
	}
	return busiestSession(ps, now)
}

// active reports whether a session whose latest request started at is active at now.
func active(at, now time.Time) bool { return now.Sub(at) <= trayPressureWindow }

// busiestSession picks the session with the highest pressure among those active at now; a
// tie goes to the most recent request, then to the lower session id, so the line does not
// flip between equals.
func busiestSession(ps []Pressure, now time.Time) (Pressure, bool) {
	var best Pressure
	found := false
	for _, p := range ps {
		if !active(p.At, now) {
			continue
		}
		if !found || cmp.Or(cmp.Compare(p.Ratio, best.Ratio), p.At.Compare(best.At), cmp.Compare(best.Session, p.Session)) > 0 {
			best, found = p, true
		}
	}
	return best, found
}

// trayPressure is p as the tray shows it (ok false: no active session).
func trayPressure(p Pressure, ok bool) tray.Pressure {
	if !ok {
		return tray.Pressure{}
	}
	return tray.Pressure{Session: p.Session, Ratio: p.Ratio, NextLayer: p.next, NextThreshold: p.NextThreshold}
}
