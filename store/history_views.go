package store

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Session summarises one client session, as the Sessions page lists it.
type Session struct {
	ID          string    `json:"id"`
	Client      string    `json:"client"` // user agent of its latest request
	FirstSeen   time.Time `json:"firstSeen" ts_type:"string"`
	LastSeen    time.Time `json:"lastSeen" ts_type:"string"`
	Requests    int64     `json:"requests"`
	Errors      int64     `json:"errors"`
	LastModel   string    `json:"lastModel"`
	LastAccount string    `json:"lastAccount"` // the account its latest request went to
	// BoundAccount is the account session affinity holds it to now ("" when unbound); the
	// app fills it from the proxy, the store cannot know.
	BoundAccount string `json:"boundAccount"`
	// Latest context pressure, as its latest /v1/messages request was forwarded.
	ContextLimit int     `json:"contextLimit"`
	Tokens       int     `json:"tokens"`
	Pressure     float64 `json:"pressure"`
	// LayersFired lists the compaction steps that ever applied, in first-seen order.
	LayersFired      []string `json:"layersFired"`
	Compactions      int64    `json:"compactions"`
	TokensSaved      int64    `json:"tokensSaved"`
	InputTokens      int64    `json:"inputTokens"`
	OutputTokens     int64    `json:"outputTokens"`
	CacheReadTokens  int64    `json:"cacheReadTokens"`
	CacheWriteTokens int64    `json:"cacheWriteTokens"`
	// Tools and ToolTokens are what its latest client request offered; ToolsCalled every tool
	// a reply in it called, in first-called order. Set against each other they show the
	// definitions sent on every turn for tools never used.
	Tools       int      `json:"tools"`
	ToolTokens  int      `json:"toolTokens"`
	ToolsCalled []string `json:"toolsCalled"`
	// SummaryCalls counts the Layer-3 summary calls the proxy made for it (also in Requests).
	SummaryCalls int64 `json:"summaryCalls"`
	// Cost is the estimated cost of its tokens (the Pricer's); nil when none of its models has
	// a price. UnpricedRequests counts its requests whose model has none (left out of Cost).
	Cost             *Cost `json:"cost,omitempty"`
	UnpricedRequests int64 `json:"unpricedRequests"`
	// Models are its requests, tokens and cost per model sent, most requests first.
	Models []ModelUsage `json:"models"`
	// Replays counts the replays of its requests (re-sent from the history: the user's
	// experiments, not the session's traffic), which every other figure leaves out.
	Replays int64 `json:"replays"`
}

// ModelUsage is the traffic of one model (as sent upstream) within a session.
type ModelUsage struct {
	Model            string `json:"model"`
	Requests         int64  `json:"requests"`
	InputTokens      int64  `json:"inputTokens"`
	OutputTokens     int64  `json:"outputTokens"`
	CacheReadTokens  int64  `json:"cacheReadTokens"`
	CacheWriteTokens int64  `json:"cacheWriteTokens"`
	Cost             *Cost  `json:"cost,omitempty"` // nil: the model has no price
}

func (m *ModelUsage) tokens() Tokens {
	return Tokens{Input: m.InputTokens, Output: m.OutputTokens, CacheRead: m.CacheReadTokens, CacheWrite: m.CacheWriteTokens}
}

// errorCond is what counts as a failed exchange in views and stats: HasFailed, as SQL.
const errorCond = "(state = 'finished' AND " + failedSQL + ")"

// notReplaySQL selects the session's own traffic: no replay (a request the user re-sent from
// the history), nor a summary call a replay caused. Sessions and stats count only these; a
// replay is an experiment on the side, counted apart (Session.Replays, Stats.Replays).
const notReplaySQL = "(replay_of = '' AND parent_id NOT IN (SELECT id FROM exchanges WHERE replay_of != ''))"

// Sessions lists sessions active since the given time, most recently active first, their
// costs estimated by p (nil: no costs). Replays are counted apart (Session.Replays) and left
// out of every other figure: a session only a replay touched since then is not listed.
func (st *Store) Sessions(ctx context.Context, since time.Time, limit int, p Pricer) ([]Session, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := st.db.QueryContext(ctx, `
		WITH g AS (
			SELECT session_id, min(start_ns) AS first_ns, max(start_ns) AS last_ns, count(*) AS n,
				sum(`+errorCond+`) AS errs, max(seq) AS last_seq,
				max(CASE WHEN route = 'messages' THEN seq END) AS last_msg,
				group_concat(NULLIF(layers, ''), ',') AS layers, sum(layers != '') AS compactions,
				sum(tokens_saved) AS saved, sum(input_tokens) AS tin, sum(output_tokens) AS tout,
				sum(cache_read_tokens) AS tcr, sum(cache_write_tokens) AS tcw,
				max(CASE WHEN parent_id = '' THEN seq END) AS last_client, sum(parent_id != '') AS summaries,
				group_concat(CASE WHEN tools_called NOT IN ('', '[]') THEN tools_called END, char(10)) AS called
			FROM exchanges WHERE session_id != '' AND start_ns >= ? AND `+notReplaySQL+`
			GROUP BY session_id ORDER BY last_seq DESC LIMIT ?)
		SELECT g.session_id, g.first_ns, g.last_ns, g.n, g.errs, coalesce(g.layers, ''), g.compactions, g.saved,
			g.tin, g.tout, g.tcr, g.tcw, l.user_agent, l.model, l.account_name,
			coalesce(m.context_limit, 0), coalesce(m.tokens_after, 0), coalesce(m.pressure_after, 0),
			l.tools, l.tool_tokens, coalesce(g.called, ''), g.summaries,
			(SELECT count(*) FROM exchanges r WHERE r.session_id = g.session_id AND r.replay_of != '' AND r.start_ns >= ?)
		FROM g JOIN exchanges l ON l.seq = coalesce(g.last_client, g.last_seq) LEFT JOIN exchanges m ON m.seq = g.last_msg
		ORDER BY g.last_seq DESC`, nanos(since), limit, nanos(since))
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	out := []Session{}
	for rows.Next() {
		var s Session
		var first, last int64
		var layers, called string
		if err := rows.Scan(&s.ID, &first, &last, &s.Requests, &s.Errors, &layers, &s.Compactions, &s.TokensSaved,
			&s.InputTokens, &s.OutputTokens, &s.CacheReadTokens, &s.CacheWriteTokens, &s.Client, &s.LastModel, &s.LastAccount,
			&s.ContextLimit, &s.Tokens, &s.Pressure, &s.Tools, &s.ToolTokens, &called, &s.SummaryCalls, &s.Replays); err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		if s.ToolsCalled, err = unionToolsCalled(called); err != nil {
			return nil, fmt.Errorf("sessions: %s: %w", s.ID, err)
		}
		s.FirstSeen, s.LastSeen = fromNanos(first), fromNanos(last)
		s.LayersFired = []string{}
		for _, l := range strings.Split(layers, ",") {
			if l != "" && !slices.Contains(s.LayersFired, l) {
				s.LayersFired = append(s.LayersFired, l)
			}
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if err := st.sessionModels(ctx, since, out, p); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return out, nil
}

// sessionModels fills each session's Models, and its Cost from theirs: one query for the
// listed sessions, grouped by session and model sent.
func (st *Store) sessionModels(ctx context.Context, since time.Time, sessions []Session, p Pricer) error {
	if len(sessions) == 0 {
		return nil
	}
	byID := make(map[string]*Session, len(sessions))
	args := make([]any, 0, len(sessions)+1)
	args = append(args, nanos(since))
	for i := range sessions {
		sessions[i].Models = []ModelUsage{}
		byID[sessions[i].ID] = &sessions[i]
		args = append(args, sessions[i].ID)
	}
	rows, err := st.db.QueryContext(ctx, `SELECT session_id, `+pricedModelSQL+`, count(*),
			sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens)
		FROM exchanges WHERE start_ns >= ? AND session_id IN (?`+strings.Repeat(",?", len(sessions)-1)+`) AND `+notReplaySQL+`
		GROUP BY 1, 2 ORDER BY 1, 3 DESC, 2`, args...)
	if err != nil {
		return fmt.Errorf("models: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	sums := make(map[string]*pricedSum, len(sessions))
	for rows.Next() {
		var id string
		var m ModelUsage
		if err := rows.Scan(&id, &m.Model, &m.Requests, &m.InputTokens, &m.OutputTokens, &m.CacheReadTokens, &m.CacheWriteTokens); err != nil {
			return fmt.Errorf("models: %w", err)
		}
		sum := sums[id]
		if sum == nil {
			sum = &pricedSum{}
			sums[id] = sum
		}
		m.Cost = priceOf(p, m.Model, m.tokens())
		sum.add(m.Cost, m.Requests)
		byID[id].Models = append(byID[id].Models, m)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	for id, sum := range sums {
		byID[id].Cost, byID[id].UnpricedRequests = sum.cost, sum.unpriced
	}
	return nil
}

// unionToolsCalled reads the tools_called columns of a session's rows, one JSON array a line
// (a column holds no raw newline: JSON escapes it), into the tools called, each once, in the
// order first called.
func unionToolsCalled(lines string) ([]string, error) {
	out := []string{}
	for line := range strings.SplitSeq(lines, "\n") {
		if line == "" {
			continue
		}
		var names []string
		if err := json.Unmarshal([]byte(line), &names); err != nil {
			return nil, fmt.Errorf("tools_called: %w", err)
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// StatsRow is the traffic of one group (an account, a model or a time bucket).
type StatsRow struct {
	Key              string    `json:"key"`                                        // account name or model; "" for buckets
	Bucket           time.Time `json:"bucket,omitempty,omitzero" ts_type:"string"` // start of the hour or day
	Requests         int64     `json:"requests"`
	Errors           int64     `json:"errors"`
	InputTokens      int64     `json:"inputTokens"`
	OutputTokens     int64     `json:"outputTokens"`
	CacheReadTokens  int64     `json:"cacheReadTokens"`
	CacheWriteTokens int64     `json:"cacheWriteTokens"`
	// TokensSaved is the (estimated) tokens compaction took out of requests.
	TokensSaved int64 `json:"tokensSaved"`
	// SummaryCalls are the Layer-3 summary calls among Requests (the proxy's own requests,
	// whose tokens the other sums include: they are spent on the account like any other).
	SummaryCalls int64 `json:"summaryCalls"`
	// Cost is the estimated cost of the tokens (the Pricer's, model by model); nil when no
	// model among them has a price. UnpricedRequests are the requests left out of it.
	Cost             *Cost `json:"cost,omitempty"`
	UnpricedRequests int64 `json:"unpricedRequests"`
}

// addRow adds r's counts and cost to row.
func (row *StatsRow) addRow(r StatsRow) {
	row.Requests += r.Requests
	row.Errors += r.Errors
	row.InputTokens += r.InputTokens
	row.OutputTokens += r.OutputTokens
	row.CacheReadTokens += r.CacheReadTokens
	row.CacheWriteTokens += r.CacheWriteTokens
	row.TokensSaved += r.TokensSaved
	row.SummaryCalls += r.SummaryCalls
	row.UnpricedRequests += r.UnpricedRequests
	if r.Cost != nil {
		if row.Cost == nil {
			row.Cost = &Cost{}
		}
		*row.Cost = row.Cost.add(*r.Cost)
	}
}

func (row *StatsRow) tokens() Tokens {
	return Tokens{Input: row.InputTokens, Output: row.OutputTokens, CacheRead: row.CacheReadTokens, CacheWrite: row.CacheWriteTokens}
}

// Stats is traffic over a time range, per account, per model and per hour or day.
type Stats struct {
	Since     time.Time  `json:"since" ts_type:"string"`
	Until     time.Time  `json:"until" ts_type:"string"`
	Bucket    string     `json:"bucket"` // "hour" or "day"
	Total     StatsRow   `json:"total"`
	ByAccount []StatsRow `json:"byAccount"`
	ByModel   []StatsRow `json:"byModel"`
	ByTime    []StatsRow `json:"byTime"`
	// Replays is the replays' traffic (and their summary calls'), which every other row
	// leaves out: the user's experiments, not the clients' traffic. Key and Bucket unset.
	Replays StatsRow `json:"replays"`
}

// statsBucket reads a stats bucket name ("" means hour) and its width.
func statsBucket(bucket string) (string, time.Duration, error) {
	switch bucket {
	case "", "hour":
		return "hour", time.Hour, nil
	case "day":
		return "day", 24 * time.Hour, nil
	}
	return "", 0, fmt.Errorf("bucket %q is not hour or day", bucket)
}

// HistoryStats aggregates finished exchanges that started in [since, until), replays apart
// (Stats.Replays); bucket is "hour" or "day" (UTC). A zero until means now. Costs are p's
// estimates (nil: none).
func (st *Store) HistoryStats(ctx context.Context, since, until time.Time, bucket string, p Pricer) (Stats, error) {
	if until.IsZero() {
		until = st.Now()
	}
	bucket, width, err := statsBucket(bucket)
	if err != nil {
		return Stats{}, fmt.Errorf("stats: %w", err)
	}
	s := Stats{Since: since.UTC(), Until: until.UTC(), Bucket: bucket}
	lo, hi := nanos(since), until.UnixNano()
	byRequests := func(a, b StatsRow) int { return cmp.Compare(b.Requests, a.Requests) }
	for _, q := range []struct {
		dst   *[]StatsRow
		key   string
		order func(a, b StatsRow) int
		args  []any
	}{
		{&s.ByAccount, `account_name, 0`, byRequests, nil},
		{&s.ByModel, pricedModelSQL + `, 0`, byRequests, nil},
		{&s.ByTime, `'', (start_ns / ?) * ?`, func(a, b StatsRow) int { return a.Bucket.Compare(b.Bucket) }, []any{int64(width), int64(width)}},
	} {
		rows, err := st.statsRows(ctx, p, q.key, notReplaySQL, q.order, append(q.args, lo, hi)...)
		if err != nil {
			return Stats{}, err
		}
		*q.dst = rows
	}
	for _, r := range s.ByAccount {
		s.Total.addRow(r)
	}
	replays, err := st.statsRows(ctx, p, `'', 0`, `NOT `+notReplaySQL, byRequests, lo, hi)
	if err != nil {
		return Stats{}, err
	}
	for _, r := range replays {
		s.Replays.addRow(r)
	}
	return s, nil
}

// statsRows aggregates the finished exchanges started in [args' last two) that match cond,
// per key (SQL of the row's Key and Bucket, with its own args first), sorted by order. Each
// group is summed per model sent as well, so that p prices each model's tokens at its own
// price.
func (st *Store) statsRows(ctx context.Context, p Pricer, key, cond string, order func(a, b StatsRow) int, args ...any) ([]StatsRow, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT `+key+`, `+pricedModelSQL+`, count(*), sum(`+errorCond+`),
			sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_write_tokens),
			sum(tokens_saved), sum(parent_id != '')
		FROM exchanges WHERE state = 'finished' AND start_ns >= ? AND start_ns < ? AND `+cond+`
		GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, args...)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	defer rows.Close() //nolint:errcheck // read-only
	out := []StatsRow{}
	type group struct {
		key    string
		bucket int64
	}
	index := map[group]int{}
	for rows.Next() {
		var g group
		var model string
		var r StatsRow
		if err := rows.Scan(&g.key, &g.bucket, &model, &r.Requests, &r.Errors, &r.InputTokens, &r.OutputTokens,
			&r.CacheReadTokens, &r.CacheWriteTokens, &r.TokensSaved, &r.SummaryCalls); err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		if r.Cost = priceOf(p, model, r.tokens()); r.Cost == nil {
			r.UnpricedRequests = r.Requests
		}
		i, ok := index[g]
		if !ok {
			i = len(out)
			index[g] = i
			out = append(out, StatsRow{Key: g.key})
			if g.bucket != 0 {
				out[i].Bucket = fromNanos(g.bucket)
			}
		}
		out[i].addRow(r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	slices.SortStableFunc(out, order)
	return out, nil
}

// ExportExchanges writes the exchanges matching f as JSON Lines, oldest first, each with its
// attempts, compaction steps and decompressed bodies (redacted when they were stored). The
// filter's cursor and limit are ignored: the whole range is exported, a page at a time.
func (st *Store) ExportExchanges(ctx context.Context, f HistoryFilter, out io.Writer) (int, error) {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	// Walk newest-first pages to find the range, then write oldest first: collect seqs only.
	var seqs []int64
	f.Before, f.Limit = 0, 1000
	for {
		page, err := st.ListExchanges(ctx, f)
		if err != nil {
			return 0, fmt.Errorf("export: %w", err)
		}
		for _, e := range page.Exchanges {
			seqs = append(seqs, e.Seq)
		}
		if page.Next == 0 {
			break
		}
		f.Before = page.Next
	}
	n := 0
	for i := len(seqs) - 1; i >= 0; i-- {
		e, err := scanExchange(st.db.QueryRowContext(ctx, `SELECT `+listColumns+` FROM exchanges WHERE seq = ?`, seqs[i]))
		if errors.Is(err, sql.ErrNoRows) {
			continue // dropped by retention meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if err := st.loadDetail(ctx, &e); err != nil {
			return n, fmt.Errorf("export %s: %w", e.ID, err)
		}
		if err := enc.Encode(e); err != nil {
			return n, fmt.Errorf("export: write: %w", err)
		}
		n++
	}
	if err := w.Flush(); err != nil {
		return n, fmt.Errorf("export: write: %w", err)
	}
	return n, nil
}

// StatsSeries is traffic per account or per model per time bucket, for charts that draw one
// line per account or model.
type StatsSeries struct {
	Since  time.Time  `json:"since" ts_type:"string"`
	Until  time.Time  `json:"until" ts_type:"string"`
	By     string     `json:"by"`     // "account" or "model"
	Bucket string     `json:"bucket"` // "hour" or "day"
	Rows   []StatsRow `json:"rows"`   // Key and Bucket set; ordered by bucket, then key
}

// HistoryStatsSeries aggregates finished exchanges that started in [since, until) per key (by:
// "account" or "model", the model as sent) and per hour or day (UTC), replays left out. A zero
// until means now. Costs are p's estimates (nil: none).
func (st *Store) HistoryStatsSeries(ctx context.Context, since, until time.Time, bucket, by string, p Pricer) (StatsSeries, error) {
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
		key = pricedModelSQL
	default:
		return StatsSeries{}, fmt.Errorf("stats series: by %q is not account or model", by)
	}
	rows, err := st.statsRows(ctx, p, key+`, (start_ns / ?) * ?`, notReplaySQL, func(a, b StatsRow) int {
		return cmp.Or(a.Bucket.Compare(b.Bucket), strings.Compare(a.Key, b.Key))
	}, int64(width), int64(width), nanos(since), until.UnixNano())
	if err != nil {
		return StatsSeries{}, err
	}
	return StatsSeries{Since: since.UTC(), Until: until.UTC(), By: by, Bucket: bucket, Rows: rows}, nil
}
