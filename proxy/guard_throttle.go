package proxy

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"longhaul/proxy/anthropic"
)

// Wrong client keys are throttled per client address: after freeStrikes wrong keys in a row,
// the address is locked out for a while that doubles with each further wrong key, up to
// maxLockout. While locked, a request that presents a key is refused without its key being
// compared, so a guesser learns nothing from it (answering a right key during the lockout
// would tell a guess apart). A right key, or strikeMemory without a wrong one, clears the
// address. Requests that present no key never count: they guess nothing.
//
// On loopback every local process shares one address, so a process that keeps sending wrong
// keys also delays the user's own clients by up to maxLockout; they retry 429s by
// themselves, and the key (16 characters or more) is out of reach of guessing either way.
const (
	freeStrikes  = 5
	firstLockout = time.Second
	maxLockout   = time.Minute
	strikeMemory = 15 * time.Minute
	// maxStrikeEntries bounds the table; when it is full, the entry idle longest goes.
	maxStrikeEntries = 4096
)

type strikeTable struct {
	mu      sync.Mutex
	entries map[string]*strike
}

type strike struct {
	count  int
	last   time.Time // the last wrong key
	locked time.Time // refused until then
}

// lockedFor is how long addr stays locked out at now (0: not locked).
func (t *strikeTable) lockedFor(addr string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.entries[addr]
	if s == nil || !now.Before(s.locked) {
		return 0
	}
	return s.locked.Sub(now)
}

// fail counts a wrong key from addr at now, and locks addr out past freeStrikes.
func (t *strikeTable) fail(addr string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.entries[addr]
	if s != nil && now.Sub(s.last) >= strikeMemory {
		s = nil // forgotten: it starts over
	}
	if s == nil {
		if len(t.entries) >= maxStrikeEntries {
			t.evictLocked(now)
		}
		s = &strike{}
		t.entries[addr] = s
	}
	s.count++
	s.last = now
	if over := s.count - freeStrikes; over > 0 {
		lock := maxLockout
		if over <= 6 { // 1 s · 2^(over-1) stays under maxLockout up to here
			lock = min(firstLockout<<(over-1), maxLockout)
		}
		s.locked = now.Add(lock)
	}
}

// forgive clears addr after a right key.
func (t *strikeTable) forgive(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entries, addr)
}

// evictLocked drops forgotten entries, or if none is, the one idle longest.
func (t *strikeTable) evictLocked(now time.Time) {
	var oldest string
	var first time.Time
	for addr, s := range t.entries {
		if now.Sub(s.last) >= strikeMemory {
			delete(t.entries, addr)
			continue
		}
		if first.IsZero() || s.last.Before(first) {
			oldest, first = addr, s.last
		}
	}
	if len(t.entries) >= maxStrikeEntries {
		delete(t.entries, oldest)
	}
}

// clientAddress is the address a request's strikes count against: its IP, or for IPv6 its
// /64, the block one host is usually given.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.To4() != nil {
		return host
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// throttled is the refusal of a locked-out address.
func throttled(wait time.Duration) *Error {
	e := newError(http.StatusTooManyRequests, anthropic.RateLimitError,
		fmt.Sprintf("too many wrong client keys from this address: try again in %d s", int((wait+time.Second-1)/time.Second)))
	e.RetryAfter = wait
	return e
}
