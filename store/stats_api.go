package store

import (
	"context"
	"fmt"
	"time"
)

// StatsSeries is traffic per account or per model per time bucket, for charts that draw one
// line per account or model.
type StatsSeries struct {
	Since  time.Time  `json:"since"`
	Until  time.Time  `json:"until"`
	By     string     `json:"by"`     // "account" or "model"
	Bucket string     `json:"bucket"` // "hour" or "day"
	Rows   []StatsRow `json:"rows"`   // Key and Bucket set; ordered by bucket, then key
}

// HistoryStatsSeries aggregates finished exchanges that started in [since, until) per key (by:
// "account" or "model", the model as sent) and per hour or day (UTC). A zero until means now.
func (st *Store) HistoryStatsSeries(ctx context.Context, since, until time.Time, bucket, by string) (StatsSeries, error) {
	if until.IsZero() {
		until = st.Now()
	}
	bucket, width, err := statsBucket(bucket)
	if err != nil {
		return StatsSeries{}, fmt.Errorf("stats series: %w", err)
	}
	var key string
	switch by {
	case "", "account":
		by, key = "account", "account_name"
	case "model":
		key = "coalesce(nullif(model_sent, ''), model)"
	default:
		return StatsSeries{}, fmt.Errorf("stats series: by %q is not account or model", by)
	}
	const sums = `count(*), sum(` + errorCond + `), sum(input_tokens), sum(output_tokens),
		sum(cache_read_tokens), sum(cache_write_tokens), sum(tokens_saved)`
	rows, err := st.statsRows(ctx, `SELECT `+key+`, (start_ns / ?) * ?, `+sums+`
		FROM exchanges WHERE state = 'finished' AND start_ns >= ? AND start_ns < ?
		GROUP BY 1, 2 ORDER BY 2, 1`, int64(width), int64(width), nanos(since), until.UnixNano())
	if err != nil {
		return StatsSeries{}, err
	}
	return StatsSeries{Since: since.UTC(), Until: until.UTC(), By: by, Bucket: bucket, Rows: rows}, nil
}
