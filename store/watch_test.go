package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// waitLimit bounds every wait in these tests. It is a deadline for a hung test, never a measure:
// each wait ends as soon as its condition holds.
const waitLimit = 10 * time.Second

// drivenWatch runs st.watch on a tick channel the test owns, so the test decides when a poll
// happens and knows when it is done: no sleeps, no guessing how many polls a pause allowed.
type drivenWatch struct {
	ticks   chan time.Time
	polls   chan struct{}
	changes int
	changed chan struct{}
	stop    func()
}

func startDrivenWatch(t *testing.T, st *Store) *drivenWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &drivenWatch{ticks: make(chan time.Time), polls: make(chan struct{}, 1), changed: make(chan struct{}, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.watch(ctx, w.ticks, func() { w.changed <- struct{}{} }, func() { w.polls <- struct{}{} })
	}()
	w.stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(w.stop)
	w.awaitPoll(t)
	if got := w.drain(); got != 1 {
		t.Fatalf("first poll reported %d changes; want 1 (the watch is established)", got)
	}
	return w
}

func (w *drivenWatch) awaitPoll(t *testing.T) {
	t.Helper()
	select {
	case <-w.polls:
	case <-time.After(waitLimit):
		t.Fatal("watch did not finish its poll")
	}
}

// poll makes the watch poll once and waits until that poll is over.
func (w *drivenWatch) poll(t *testing.T) {
	t.Helper()
	select {
	case w.ticks <- time.Now():
	case <-time.After(waitLimit):
		t.Fatal("watch does not take ticks")
	}
	w.awaitPoll(t)
}

// drain returns how many changes were reported since the last drain.
func (w *drivenWatch) drain() int {
	n := 0
	for {
		select {
		case <-w.changed:
			n++
		default:
			return n
		}
	}
}

func TestWatch(t *testing.T) {
	t.Run("fires when another Store writes", func(t *testing.T) {
		app, path := openTemp(t)
		cli, _ := openAt(t, path)
		w := startDrivenWatch(t, app)

		if _, err := cli.SetSetting(context.Background(), "proxy.port", "9400"); err != nil {
			t.Fatal(err)
		}
		w.poll(t)
		if n := w.drain(); n != 1 {
			t.Fatalf("changes after another Store committed = %d; want 1", n)
		}
		if got, err := app.GetSetting(context.Background(), "proxy.port"); err != nil || got != "9400" {
			t.Errorf("GetSetting(proxy.port) in the watching Store = %q, %v; want 9400", got, err)
		}
		w.poll(t)
		if n := w.drain(); n != 0 {
			t.Errorf("changes on the next poll without writes = %d; want 0", n)
		}
	})
	t.Run("quiet without writes", func(t *testing.T) {
		app, path := openTemp(t)
		cli, _ := openAt(t, path)
		w := startDrivenWatch(t, app)
		// Reads from another Store are not changes.
		if _, err := cli.Settings(context.Background()); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			w.poll(t)
		}
		if n := w.drain(); n != 0 {
			t.Errorf("changes over 3 polls without writes = %d; want 0", n)
		}
	})
	t.Run("a write before the baseline is not missed", func(t *testing.T) {
		// Whatever lands before Watch takes its baseline is covered by the
		// call that reports the watch established.
		app, path := openTemp(t)
		cli, _ := openAt(t, path)
		if _, err := cli.SetSetting(context.Background(), "proxy.port", "9401"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		seen := make(chan string, 1)
		go app.Watch(ctx, time.Hour, func() {
			v, err := app.GetSetting(ctx, "proxy.port")
			if err == nil {
				select {
				case seen <- v:
				default:
				}
			}
		})
		select {
		case v := <-seen:
			if v != "9401" {
				t.Errorf("first onChange read proxy.port = %q; want 9401", v)
			}
		case <-time.After(waitLimit):
			t.Fatal("Watch never called onChange")
		}
	})
	t.Run("returns when cancelled", func(t *testing.T) {
		app, _ := openTemp(t)
		ctx, cancel := context.WithCancel(context.Background())
		established := make(chan struct{}, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			app.Watch(ctx, time.Hour, func() { established <- struct{}{} })
		}()
		select {
		case <-established:
		case <-time.After(waitLimit):
			t.Fatal("Watch did not report that it was established")
		}
		cancel()
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Fatal("Watch did not return after its context was cancelled")
		}
	})
	t.Run("returns at once on a cancelled context", func(t *testing.T) {
		app, _ := openTemp(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		app.Watch(ctx, time.Millisecond, func() { t.Error("onChange called on a cancelled context") })
	})
}

// The request history commits several times a second; only settings and
// accounts changes may wake the app.
func TestWatchIgnoresHistoryWrites(t *testing.T) {
	app, path := openTemp(t)
	other, _ := openAt(t, path)
	w := startDrivenWatch(t, app)
	writeAll(t, other, fullExchange(1, testNow))
	if err := other.SaveCalibrationFactors(context.Background(), map[string]float64{"claude": 1.2}); err != nil {
		t.Fatal(err)
	}
	w.poll(t)
	if n := w.drain(); n != 0 {
		t.Errorf("changes after history and calibration writes = %d; want 0", n)
	}
	if _, err := other.SetSetting(context.Background(), "proxy.port", "9402"); err != nil {
		t.Fatal(err)
	}
	w.poll(t)
	if n := w.drain(); n != 1 {
		t.Errorf("changes after a settings write = %d; want 1", n)
	}
	if _, err := other.AddAccount(context.Background(), Account{BaseURL: "https://api.anthropic.com", Secret: "sk-ant-watch-test-0001", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	w.poll(t)
	if n := w.drain(); n != 1 {
		t.Errorf("changes after an account was added = %d; want 1", n)
	}
}

// watchFiles reads the counter after each burst of file changes and, with none, every
// backstop; it ends with its context.
func TestWatchFilesPollsOnChangesAndOnTheBackstop(t *testing.T) {
	run := func(t *testing.T, every, backstop time.Duration) (changes chan struct{}, polls chan struct{}) {
		app, _ := openTemp(t)
		ctx, cancel := context.WithCancel(context.Background())
		changes, polls = make(chan struct{}, 1), make(chan struct{}, 64)
		done := make(chan struct{})
		go func() {
			defer close(done)
			app.watchFiles(ctx, changes, every, backstop, func() {}, func() { polls <- struct{}{} })
		}()
		t.Cleanup(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(waitLimit):
				t.Error("watchFiles did not return after its context was cancelled")
			}
		})
		return changes, polls
	}
	await := func(t *testing.T, polls chan struct{}, what string) {
		t.Helper()
		select {
		case <-polls:
		case <-time.After(waitLimit):
			t.Fatalf("no %s within %v", what, waitLimit)
		}
	}
	t.Run("a change is read", func(t *testing.T) {
		changes, polls := run(t, time.Millisecond, time.Hour)
		await(t, polls, "first poll")
		for i := range 3 {
			changes <- struct{}{}
			await(t, polls, fmt.Sprintf("poll after change %d", i+1))
		}
	})
	t.Run("no change: the backstop", func(t *testing.T) {
		_, polls := run(t, time.Hour, time.Millisecond)
		for i := range 4 {
			await(t, polls, fmt.Sprintf("poll %d", i+1))
		}
	})
}
