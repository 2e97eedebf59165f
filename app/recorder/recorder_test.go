package recorder

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"longhaul/app/internal/wait"
	"longhaul/proxy"
	"longhaul/store"
)

func TestRecorderNeverBlocksAndCountsDrops(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := New(st, Options{QueueSize: 4})
	done := make(chan struct{})
	go func() {
		for i := range 10 { // nothing drains the queue: Run is not running
			rec.Observe(proxy.Exchange{ID: "lh_" + string(rune('a'+i)), State: proxy.ExchangeFinished, Start: time.Now()})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a hang guard, not a measurement
		t.Fatal("Observe blocked on a full queue")
	}
	if s := rec.Stats(); s.Dropped != 6 || s.Queued != 4 {
		t.Errorf("stats = %+v; want 6 dropped, 4 queued", s)
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	page, err := st.ListExchanges(context.Background(), store.HistoryFilter{})
	if err != nil || len(page.Exchanges) != 4 {
		t.Errorf("after Flush: %d rows, %v; want the 4 queued", len(page.Exchanges), err)
	}
}

// TestFeedDropsSlowSubscriberWithoutBlocking: a subscriber that never reads gets its buffer's
// worth and is then dropped (its channel closed), while one that keeps up gets everything and
// the publisher never waits on either.
func TestFeedDropsSlowSubscriberWithoutBlocking(t *testing.T) {
	feed := NewFeed()
	slow, _ := feed.Subscribe()
	fast, unsubscribe := feed.Subscribe()
	defer unsubscribe()
	const n = subscriberBuffer + 10
	for i := range n {
		feed.Publish("n", i) // returns at once even once slow's buffer is full
		if e, ok := <-fast; !ok || string(e.Data) != strconv.Itoa(i) {
			t.Fatalf("fast subscriber got %q (open %t); want %d", e.Data, ok, i)
		}
	}
	got := 0
	for range slow { // closed once it fell behind; what it had stays readable
		got++
	}
	if got != subscriberBuffer {
		t.Errorf("slow subscriber got %d events before being dropped; want its buffer's worth (%d)", got, subscriberBuffer)
	}
}

func TestFeedStartsNewSubscribersWithTheLatestOfEachName(t *testing.T) {
	feed := NewFeed()
	feed.Publish("proxy:status", 1)
	feed.Publish("proxy:status", 2)
	feed.Publish(EventExchanges, []string{"a"})
	late, stop := feed.Subscribe()
	defer stop()
	got := map[string]string{}
	for range 2 {
		e := <-late
		got[e.Name] = string(e.Data)
	}
	if got["proxy:status"] != "2" || got[EventExchanges] != `["a"]` || len(late) != 0 {
		t.Errorf("a new subscriber starts with %v (and %d more); want the latest of each name only", got, len(late))
	}
}

// TestBodiesGoBeforeMetadataUnderMemoryPressure: the writer's queue is bounded in body bytes.
// With the writer stopped, exchanges past the bound are still queued — their metadata is
// recorded — but without bodies, and counted; the live feed never holds bodies; committing
// gives the budget back.
func TestBodiesGoBeforeMetadataUnderMemoryPressure(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const bodySize = 300 << 10
	rec := New(st, Options{QueueBytes: 1 << 20})
	_, unsubscribe := rec.Feed().Subscribe() // a window follows the live feed
	defer unsubscribe()
	body := bytes.Repeat([]byte("x"), bodySize)
	observe := func(i int) {
		rec.Observe(proxy.Exchange{ID: fmt.Sprintf("lh_%02d", i), State: proxy.ExchangeFinished, Start: time.Now(), RequestBody: body})
	}
	for i := range 10 { // nothing drains the queue: Run is not running
		observe(i)
	}
	s := rec.Stats()
	if s.Dropped != 0 || s.Queued != 10 || s.BodiesDropped != 7 || s.QueuedBytes != 3*bodySize {
		t.Errorf("stats = %+v; want all 10 queued, 3 bodies (%d bytes) held, 7 bodies dropped", s, 3*bodySize)
	}
	for range 10 {
		if ex := <-rec.live; ex.RequestBody != nil {
			t.Fatalf("live update %s holds a %d-byte body; want none", ex.ID, len(ex.RequestBody))
		}
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	withBodies := 0
	for i := range 10 {
		e, err := st.Exchange(context.Background(), fmt.Sprintf("lh_%02d", i))
		if err != nil {
			t.Fatalf("exchange %d not recorded: %v", i, err)
		}
		if e.Bodies != nil && len(e.Bodies.Request) == bodySize {
			withBodies++
		}
	}
	if withBodies != 3 {
		t.Errorf("%d exchanges recorded with their body; want the 3 within the bound", withBodies)
	}
	if s := rec.Stats(); s.QueuedBytes != 0 || s.Written != 10 {
		t.Errorf("after Flush stats = %+v; want 10 written and the byte budget back to 0", s)
	}
	observe(10)
	if s := rec.Stats(); s.BodiesDropped != 7 || s.QueuedBytes != bodySize {
		t.Errorf("after the budget came back: stats = %+v; want the new body held", s)
	}
}

// TestUnwatchedFeedSkipsTheLiveView: while no window, browser or tray follows the feed,
// Observe queues nothing for it (the history still gets everything), and a follower arriving
// afterwards does not start with the batch from before (it would be stale).
func TestUnwatchedFeedSkipsTheLiveView(t *testing.T) {
	rec, st := runRecorder(t, Options{LiveEvery: 5 * time.Millisecond, FlushEvery: 5 * time.Millisecond})

	events, unsubscribe := rec.Feed().Subscribe()
	rec.Observe(proxy.Exchange{ID: "lh_watched", State: proxy.ExchangeStarted, Start: time.Now()})
	for e := range events {
		if e.Name == EventExchanges && bytes.Contains(e.Data, []byte("lh_watched")) {
			break
		}
	}
	unsubscribe()

	rec.Observe(proxy.Exchange{ID: "lh_watched", State: proxy.ExchangeFinished, Start: time.Now()})
	rec.Observe(proxy.Exchange{ID: "lh_unwatched", State: proxy.ExchangeFinished, Start: time.Now()})
	if n := len(rec.live); n != 0 {
		t.Errorf("%d live updates queued with nobody watching; want none", n)
	}
	wait.Until(t, "both exchanges in the history", func() bool {
		a, errA := st.Exchange(context.Background(), "lh_watched")
		_, errB := st.Exchange(context.Background(), "lh_unwatched")
		return errA == nil && errB == nil && a.State == "finished"
	})
	wait.Until(t, "a new follower starting without the batch from before", func() bool {
		events, unsubscribe := rec.Feed().Subscribe()
		defer unsubscribe()
		for {
			select {
			case e := <-events:
				if e.Name == EventExchanges {
					return false
				}
			default:
				return true
			}
		}
	})
}

// Once the writer has stored a run of large bodies and then had nothing to write for
// ReturnMemoryIdle, it gives the heap they grew back to the OS: a collection, and
// debug.FreeOSMemory's (counted as forced collections, which nothing else in this package
// asks for; the runtime's own scavenger would take minutes and forces none).
func TestMemoryGoesBackToTheOSAfterIdle(t *testing.T) {
	rec, _ := runRecorder(t, Options{FlushEvery: 20 * time.Millisecond, ReturnMemoryIdle: 300 * time.Millisecond})

	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := forced()
	const bodies, size = 24, 1 << 20 // past ReturnMemoryAfter's 8 MiB
	for i := range bodies {
		body := bytes.Repeat([]byte{byte('a' + i%26)}, size) // garbage once written
		rec.Observe(proxy.Exchange{ID: fmt.Sprintf("lh_%02d", i), State: proxy.ExchangeFinished, Start: time.Now(), RequestBody: body})
	}
	wait.Until(t, "every body written", func() bool { return rec.Stats().Written == bodies })
	wait.Until(t, "the heap the bodies grew returned to the OS", func() bool { return forced() >= before+2 })
}

// A large request body is digested as soon as it is queued, long before its batch: the body
// budget then holds only what the digest keeps (its new chunks, compressed), the proxy's buffer
// is given back, and the batch written later stores the body byte-identical.
func TestLargeRequestBodiesAreDigestedBeforeTheirBatch(t *testing.T) {
	ctx := context.Background()
	rec, st := runRecorder(t, Options{FlushEvery: time.Hour}) // no batch unless asked

	var sent []string
	for turn := 20; turn < 23; turn++ {
		body := sessionTurn("dddd", "Be brief.", turn, "")
		sent = append(sent, body)
		rec.Observe(proxy.Exchange{ID: fmt.Sprintf("lh_digest_%d", turn), State: proxy.ExchangeFinished, Start: time.Now(),
			SessionID: "dddd", RequestBody: []byte(body)})
		wait.Until(t, "the body digested, its buffer given back", func() bool {
			s := rec.Stats()
			return s.Queued == 0 && s.QueuedBytes > 0 && s.QueuedBytes < int64(len(body))/4
		})
	}
	if s := rec.Stats(); s.Written != 0 {
		t.Fatalf("%d records written before any batch was due", s.Written)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for i, body := range sent {
		e, err := st.Exchange(ctx, fmt.Sprintf("lh_digest_%d", 20+i))
		if err != nil || e.Bodies == nil || e.Bodies.Request != body {
			t.Fatalf("turn %d: stored request differs from the one sent (%v)", 20+i, err)
		}
	}
	if s := rec.Stats(); s.QueuedBytes != 0 || s.BodiesLost != 0 {
		t.Errorf("stats %+v; want nothing queued, nothing lost", s)
	}
}
