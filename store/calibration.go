package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// CalibrationFactors returns the persisted estimator calibration, family → factor.
func (st *Store) CalibrationFactors(ctx context.Context) (map[string]float64, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT family, factor FROM calibration`)
	if err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var family string
		var factor float64
		if err := rows.Scan(&family, &factor); err != nil {
			return nil, fmt.Errorf("read calibration: %w", err)
		}
		out[family] = factor
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read calibration: %w", err)
	}
	return out, nil
}

// SaveCalibrationFactors upserts factors (families it does not name are kept).
func (st *Store) SaveCalibrationFactors(ctx context.Context, factors map[string]float64) error {
	if len(factors) == 0 {
		return nil
	}
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save calibration: %w", err)
	}
	defer st.rollback(tx)
	now := st.now()
	for _, family := range slices.Sorted(maps.Keys(factors)) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO calibration (family, factor, updated_at) VALUES (?, ?, ?)
			ON CONFLICT(family) DO UPDATE SET factor = excluded.factor, updated_at = excluded.updated_at`,
			family, factors[family], now); err != nil {
			return fmt.Errorf("save calibration %s: %w", family, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save calibration: %w", err)
	}
	return nil
}
