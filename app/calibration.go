package app

import (
	"context"
	"maps"
	"time"
)

// calibrationSaveEvery is how often learned estimator factors are written
// back; they move slowly (an EMA), so losing a minute of them costs nothing.
const calibrationSaveEvery = time.Minute

// persistCalibration saves the proxy's estimator calibration whenever it
// changed, and once more when ctx ends, so the next start begins calibrated.
func (a *App) persistCalibration(ctx context.Context) {
	cal := a.proxy.Calibrator()
	saved := cal.Snapshot()
	save := func(ctx context.Context) {
		now := cal.Snapshot()
		if maps.Equal(now, saved) {
			return
		}
		if err := a.store.SaveCalibrationFactors(ctx, now); err != nil {
			a.log.Warn("save estimator calibration", "err", err)
			return
		}
		saved = now
	}
	t := time.NewTicker(calibrationSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			save(ctx)
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			save(final)
			cancel()
			return
		}
	}
}
