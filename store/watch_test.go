package store

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

const watchEvery = 5 * time.Millisecond

// startWatch runs st.Watch in the background and returns the change counter and a stop function
// that cancels it and fails the test if Watch does not return.
func startWatch(t *testing.T, st *Store) (*atomic.Int32, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var changes atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		st.Watch(ctx, watchEvery, func() { changes.Add(1) })
	}()
	stop := func() {
		t.Helper()
		cancel()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatal("Watch did not return after its context was cancelled")
		}
	}
	t.Cleanup(func() {
		cancel()
		<-done
	})
	// The first call reports that the watch is established (its baseline taken).
	deadline := time.Now().Add(2 * time.Second)
	for changes.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("Watch did not report that it was established")
		}
		time.Sleep(watchEvery)
	}
	changes.Store(0)
	return &changes, stop
}

func TestWatch(t *testing.T) {
	t.Run("fires when another Store writes", func(t *testing.T) {
		app, path := openTemp(t)
		cli, _ := openAt(t, path)
		changes, stop := startWatch(t, app)

		if _, err := cli.SetSetting(context.Background(), "proxy.port", "9400"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for changes.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(watchEvery)
		}
		if changes.Load() == 0 {
			t.Fatal("onChange not called after another Store committed")
		}
		if got, err := app.GetSetting(context.Background(), "proxy.port"); err != nil || got != "9400" {
			t.Errorf("GetSetting(proxy.port) in the watching Store = %q, %v; want 9400", got, err)
		}
		stop()
	})
	t.Run("quiet without writes", func(t *testing.T) {
		app, path := openTemp(t)
		cli, _ := openAt(t, path)
		changes, stop := startWatch(t, app)
		// Reads from another Store are not changes.
		if _, err := cli.Settings(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * watchEvery)
		if n := changes.Load(); n != 0 {
			t.Errorf("onChange called %d times without writes; want 0", n)
		}
		stop()
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
		go app.Watch(ctx, watchEvery, func() {
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
		case <-time.After(2 * time.Second):
			t.Fatal("Watch never called onChange")
		}
	})
	t.Run("returns when cancelled", func(t *testing.T) {
		app, _ := openTemp(t)
		_, stop := startWatch(t, app)
		stop()
	})
	t.Run("returns at once on a cancelled context", func(t *testing.T) {
		app, _ := openTemp(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		app.Watch(ctx, watchEvery, func() { t.Error("onChange called on a cancelled context") })
	})
}

// The request history commits several times a second; only settings and
// accounts changes may wake the app.
func TestWatchIgnoresHistoryWrites(t *testing.T) {
	app, path := openTemp(t)
	other, _ := openAt(t, path)
	changes, stop := startWatch(t, app)
	writeAll(t, other, fullExchange(1, testNow))
	if err := other.SaveCalibrationFactors(context.Background(), map[string]float64{"claude": 1.2}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * watchEvery)
	if n := changes.Load(); n != 0 {
		t.Errorf("onChange called %d times after history and calibration writes; want 0", n)
	}
	if _, err := other.SetSetting(context.Background(), "proxy.port", "9402"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for changes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(watchEvery)
	}
	if changes.Load() == 0 {
		t.Error("onChange not called after a settings write")
	}
	changes.Store(0)
	if _, err := other.AddAccount(context.Background(), Account{BaseURL: "https://api.anthropic.com", Secret: "sk-ant-watch-test-0001", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(2 * time.Second)
	for changes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(watchEvery)
	}
	if changes.Load() == 0 {
		t.Error("onChange not called after an account was added")
	}
	stop()
}
