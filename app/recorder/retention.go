package recorder

import (
	"context"
	"time"

	"longhaul/store"
)

// retentionDelay lets the app start up before the first retention pass touches the disk.
const retentionDelay = 30 * time.Second

// retain bounds the history in the background: first it makes sure freed pages can be given
// back (auto_vacuum=INCREMENTAL), then every RetentionEvery it applies the current settings.
func (r *Recorder) retain(ctx context.Context) {
	t := time.NewTimer(min(retentionDelay, r.opts.RetentionEvery))
	defer t.Stop()
	converted := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !converted {
			rebuilt, err := r.store.EnableIncrementalVacuum(ctx)
			if err != nil && ctx.Err() == nil {
				r.log.Warn("history: cannot enable incremental vacuum; deleted history will not shrink the file", "err", err)
			}
			if rebuilt {
				r.log.Info("history: database rebuilt with auto_vacuum=INCREMENTAL")
			}
			converted = err == nil
		}
		if _, err := r.ApplyRetention(ctx); err != nil && ctx.Err() == nil {
			r.log.Error("history: retention", "err", err)
		}
		t.Reset(r.opts.RetentionEvery)
	}
}

// ApplyRetention runs one retention pass with the stored history settings.
func (r *Recorder) ApplyRetention(ctx context.Context) (store.RetentionResult, error) {
	s, err := r.store.Settings(ctx)
	if err != nil {
		return store.RetentionResult{}, err
	}
	const day = 24 * time.Hour
	res, err := r.store.ApplyRetention(ctx, store.Retention{
		BodyAge:     time.Duration(s.History.BodyRetentionDays) * day,
		MetadataAge: time.Duration(s.History.RetentionDays) * day,
		MaxBytes:    s.History.MaxBytes,
	})
	if res.BodiesDeleted+res.ExchangesDeleted > 0 {
		r.log.Info("history: retention", "bodies", res.BodiesDeleted, "exchanges", res.ExchangesDeleted,
			"bytes_before", res.SizeBefore, "bytes_after", res.SizeAfter)
	}
	return res, err
}
