package recorder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/proxy"
)

// unchangedOver reports whether count stays the same while a reference ticker of period
// fires n times: an absence shown by counting another clock's events, so a busy machine
// only makes it wait longer, never fail a recorder that is really asleep.
func unchangedOver(count func() int64, period time.Duration, n int) (before, after int64) {
	before = count()
	ref := time.NewTicker(period)
	defer ref.Stop()
	for range n {
		<-ref.C
	}
	return before, count()
}

// An idle recorder does not wake the app: once a tick finds nothing to write, the writer
// sleeps with its ticker stopped until the next record, and the live relay sleeps until an
// update arrives. (Each woke ten and four times a second before, an idle tray app's main
// cost: docs/performance.md, eighth pass.)
func TestIdleRecorderSleeps(t *testing.T) {
	const every = 2 * time.Millisecond
	rec, st := runRecorder(t, Options{FlushEvery: every, LiveEvery: every})
	events, unsubscribe := rec.Feed().Subscribe()
	defer unsubscribe()

	for turn := range 3 {
		id := fmt.Sprintf("lh_idle_%d", turn)
		rec.Observe(proxy.Exchange{ID: id, State: proxy.ExchangeFinished, Start: time.Now()})
		wait.Until(t, id+" written", func() bool { _, err := st.Exchange(context.Background(), id); return err == nil })
		for {
			e, ok := wait.Receive(t, id+" on the live feed", events)
			if !ok {
				t.Fatal("feed closed")
			}
			if e.Name == EventExchanges {
				break
			}
		}
		wait.Until(t, "the writer asleep", rec.sleeping.Load)
		if before, after := unchangedOver(rec.ticks.Load, every, 25); after != before {
			t.Errorf("turn %d: the writer ticked %d times while asleep; want none", turn, after-before)
		}
		if before, after := unchangedOver(rec.liveBatches.Load, every, 25); after != before {
			t.Errorf("turn %d: the relay woke %d times with no update; want none", turn, after-before)
		}
	}
}

// Records observed right as the writer falls asleep are not left waiting: whichever of
// Observe and the writer's last look at the queue comes second sees the other. Goroutines
// observe in bursts with pauses that let the writer fall asleep between them; every record
// must be written.
func TestRecordsObservedAsTheWriterSleepsAreWritten(t *testing.T) {
	rec, _ := runRecorder(t, Options{FlushEvery: time.Millisecond})
	const writers, bursts, perBurst = 4, 25, 3
	done := make(chan struct{})
	for w := range writers {
		go func() {
			defer func() { done <- struct{}{} }()
			for b := range bursts {
				for i := range perBurst {
					rec.Observe(proxy.Exchange{ID: fmt.Sprintf("lh_%d_%d_%d", w, b, i), State: proxy.ExchangeFinished, Start: time.Now()})
				}
				for !rec.sleeping.Load() && rec.Stats().Written < int64((b+1)*perBurst) {
					time.Sleep(100 * time.Microsecond) // until this burst is written or the writer sleeps
				}
			}
		}()
	}
	for range writers {
		<-done
	}
	want := int64(writers * bursts * perBurst)
	wait.Until(t, fmt.Sprintf("all %d records written", want), func() bool { return rec.Stats().Written == want })
	if s := rec.Stats(); s.Dropped != 0 {
		t.Errorf("stats %+v; want nothing dropped", s)
	}
}
