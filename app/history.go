package app

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"longhaul/store"
)

// ErrNoHistory is returned by history views when the app runs without a recorder.
var ErrNoHistory = errors.New("history is not recorded in this process")

// EventHistoryExchanges carries live batches of exchanges (their latest state) to the window.
// Mirrored in frontend/src/events.ts.
const EventHistoryExchanges = "history:exchanges"

// runHistory runs the recorder and relays its live batches to the UI hub, until ctx is done.
func (a *App) runHistory(ctx context.Context) {
	if a.recorder == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { a.recorder.Run(ctx) })
	wg.Go(func() { a.relayLive(ctx) })
	wg.Wait()
}

// relayLive forwards feed batches to the hub (and so to the window). A new hub subscriber
// gets the last batch again; exchanges carry their state, and a view keeps a finished record
// over a started one.
func (a *App) relayLive(ctx context.Context) {
	for {
		batches, unsubscribe := a.recorder.Feed().Subscribe()
		for open := true; open; {
			select {
			case <-ctx.Done():
				unsubscribe()
				return
			case b, ok := <-batches:
				if !ok {
					open = false // fell behind: subscribe again
					break
				}
				a.events.Publish(EventHistoryExchanges, b)
			}
		}
		unsubscribe()
	}
}

// configureHistory applies the history settings to the recorder (the proxy gets its capture
// settings through proxyConfig).
func (a *App) configureHistory(h store.HistorySettings) {
	if a.recorder != nil {
		a.recorder.Configure(h)
	}
}

// flushHistory commits what the recorder still holds; Shutdown calls it after the proxy has
// drained, so the last requests are kept.
func (a *App) flushHistory(ctx context.Context) error {
	if a.recorder == nil {
		return nil
	}
	return a.recorder.Flush(context.WithoutCancel(ctx))
}

// Recorder returns the history recorder, nil when there is none.
func (a *App) Recorder() *Recorder { return a.recorder }

// History lists recorded exchanges, newest first, one page at a time.
func (a *App) History(ctx context.Context, f store.HistoryFilter) (store.HistoryPage, error) {
	return a.store.ListExchanges(ctx, f)
}

// HistoryDetail returns one exchange with its attempts, compaction steps and bodies.
func (a *App) HistoryDetail(ctx context.Context, id string) (store.Exchange, error) {
	return a.store.Exchange(ctx, id)
}

// HistorySessions lists sessions seen since the given time, most recent first.
func (a *App) HistorySessions(ctx context.Context, since time.Time, limit int) ([]store.Session, error) {
	sessions, err := a.store.Sessions(ctx, since, limit)
	if err != nil {
		return nil, err
	}
	now := a.clock()
	for i := range sessions {
		if acct, ok := a.proxy.Pool().SessionAccount(sessions[i].ID, now); ok {
			sessions[i].BoundAccount = acct.Name()
		}
	}
	return sessions, nil
}

// clock is the recorder's injectable clock, else the wall clock.
func (a *App) clock() time.Time {
	if a.recorder != nil {
		return a.recorder.now()
	}
	return time.Now()
}

// HistoryStats aggregates traffic per account, model and hour or day.
func (a *App) HistoryStats(ctx context.Context, since, until time.Time, bucket string) (store.Stats, error) {
	return a.store.HistoryStats(ctx, since, until, bucket)
}

// ExportHistory writes the matching exchanges as JSON Lines.
func (a *App) ExportHistory(ctx context.Context, f store.HistoryFilter, w io.Writer) (int, error) {
	return a.store.ExportExchanges(ctx, f, w)
}

// HistoryStatus is the recorder's health for the UI.
type HistoryStatus struct {
	RecorderStats
	DatabaseBytes int64 `json:"databaseBytes"`
}

// HistoryStatus reports the recorder's counters and the database size.
func (a *App) HistoryStatus(ctx context.Context) (HistoryStatus, error) {
	if a.recorder == nil {
		return HistoryStatus{}, ErrNoHistory
	}
	size, err := a.store.HistorySize(ctx)
	if err != nil {
		return HistoryStatus{}, err
	}
	return HistoryStatus{RecorderStats: a.recorder.Stats(), DatabaseBytes: size}, nil
}
