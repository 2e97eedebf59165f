package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retention bounds the history (history.retention_days, history.max_bytes): by age, bodies first, and by database size, oldest
// first. Zero fields do not bound.
type Retention struct {
	BodyAge     time.Duration // bodies of exchanges older than this are dropped
	MetadataAge time.Duration // exchanges older than this are dropped
	MaxBytes    int64         // the database file's size cap
}

// RetentionResult says what a pass did.
type RetentionResult struct {
	BodiesDeleted    int64 `json:"bodiesDeleted"`
	ExchangesDeleted int64 `json:"exchangesDeleted"`
	SizeBefore       int64 `json:"sizeBefore"` // database bytes in use
	SizeAfter        int64 `json:"sizeAfter"`
}

// retentionChunk is how many rows one delete transaction takes: small enough that the
// recorder's writer never waits long for the lock.
const retentionChunk = 500

// ApplyRetention deletes what the policy no longer keeps, in short transactions (oldest first,
// bodies before metadata), then returns the freed pages to the file system. It is meant for a
// background loop; the recorder keeps writing meanwhile.
func (st *Store) ApplyRetention(ctx context.Context, p Retention) (RetentionResult, error) {
	var res RetentionResult
	var err error
	if res.SizeBefore, err = st.usedBytes(ctx); err != nil {
		return res, err
	}
	now := st.Now()
	if p.BodyAge > 0 {
		n, err := st.deleteBefore(ctx, `DELETE FROM exchange_bodies WHERE exchange_seq IN
			(SELECT exchange_seq FROM exchange_bodies WHERE exchange_seq <= ? ORDER BY exchange_seq LIMIT ?)`, now.Add(-p.BodyAge))
		res.BodiesDeleted += n
		if err != nil {
			return res, fmt.Errorf("retention: bodies by age: %w", err)
		}
	}
	if p.MetadataAge > 0 {
		n, err := st.deleteBefore(ctx, `DELETE FROM exchanges WHERE seq IN
			(SELECT seq FROM exchanges WHERE seq <= ? ORDER BY seq LIMIT ?)`, now.Add(-p.MetadataAge))
		res.ExchangesDeleted += n
		if err != nil {
			return res, fmt.Errorf("retention: exchanges by age: %w", err)
		}
	}
	if p.MaxBytes > 0 {
		b, e, err := st.shrinkTo(ctx, p.MaxBytes)
		res.BodiesDeleted += b
		res.ExchangesDeleted += e
		if err != nil {
			return res, fmt.Errorf("retention: by size: %w", err)
		}
	}
	if res.BodiesDeleted+res.ExchangesDeleted > 0 {
		// Chunks shared with kept bodies stay; the ones only deleted bodies used go now.
		if _, err := st.sweepChunks(ctx); err != nil {
			return res, fmt.Errorf("retention: %w", err)
		}
		if err := st.releaseSpace(ctx); err != nil {
			return res, fmt.Errorf("retention: %w", err)
		}
	}
	if res.SizeAfter, err = st.usedBytes(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// deleteBefore runs a chunked delete of rows of exchanges that started before cutoff. Rows are
// in seq order, which follows start order, so the cutoff becomes a seq bound found once.
func (st *Store) deleteBefore(ctx context.Context, chunkDelete string, cutoff time.Time) (int64, error) {
	var bound sql.NullInt64
	if err := st.db.QueryRowContext(ctx, `SELECT max(seq) FROM exchanges WHERE start_ns < ?`, cutoff.UnixNano()).Scan(&bound); err != nil {
		return 0, err
	}
	if !bound.Valid {
		return 0, nil
	}
	return st.deleteChunks(ctx, chunkDelete, bound.Int64, -1)
}

// deleteChunks repeats a "delete up to N rows with seq ≤ bound" statement until it deletes
// nothing or limit rows are gone (-1: no limit), retentionChunk rows per transaction.
func (st *Store) deleteChunks(ctx context.Context, chunkDelete string, bound int64, limit int64) (int64, error) {
	var total int64
	for limit < 0 || total < limit {
		chunk := int64(retentionChunk)
		if limit >= 0 {
			chunk = min(chunk, limit-total)
		}
		res, err := st.db.ExecContext(ctx, chunkDelete, bound, chunk)
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
	return total, nil
}

// shrinkTo deletes the oldest bodies, then the oldest exchanges, until the pages in use fit
// in 90% of max (the headroom keeps the next pass from starting at once). Each round deletes
// about as many rows as the excess is worth, so small caps are not overshot.
func (st *Store) shrinkTo(ctx context.Context, max int64) (bodies, exchanges int64, err error) {
	target := max / 10 * 9
	// Chunks nothing refers to (an interrupted pass left them) are the first space to reclaim.
	if _, err := st.sweepChunks(ctx); err != nil {
		return 0, 0, err
	}
	for {
		used, err := st.usedBytes(ctx)
		if err != nil || used <= target {
			return bodies, exchanges, err
		}
		excess := used - target
		avgBody, err := st.avgBodyBytes(ctx)
		if err != nil {
			return bodies, exchanges, err
		}
		if avgBody > 0 {
			n, err := st.deleteChunks(ctx, `DELETE FROM exchange_bodies WHERE exchange_seq IN
				(SELECT exchange_seq FROM exchange_bodies WHERE exchange_seq <= ? ORDER BY exchange_seq LIMIT ?)`,
				1<<62, rowsWorth(excess, avgBody))
			bodies += n
			if err == nil && n > 0 {
				// Deleting a body frees only the chunks no kept body shares.
				_, err = st.sweepChunks(ctx)
			}
			if err != nil || n > 0 {
				if err != nil {
					return bodies, exchanges, err
				}
				continue
			}
		}
		var rows int64
		if err := st.db.QueryRowContext(ctx, `SELECT count(*) FROM exchanges`).Scan(&rows); err != nil {
			return bodies, exchanges, err
		}
		if rows == 0 {
			return bodies, exchanges, nil // nothing left to delete
		}
		n, err := st.deleteChunks(ctx, `DELETE FROM exchanges WHERE seq IN
			(SELECT seq FROM exchanges WHERE seq <= ? ORDER BY seq LIMIT ?)`, 1<<62, rowsWorth(excess, float64(used)/float64(rows)))
		exchanges += n
		if err != nil || n == 0 {
			return bodies, exchanges, err
		}
	}
}

// avgBodyBytes is what a stored body costs on average, for sizing a deletion: the oldest
// bodies' own columns plus an equal share of the chunk bytes. Bodies share chunks, so deleting
// N of them may free less; shrinkTo measures again and goes on. 0 when no body is stored.
func (st *Store) avgBodyBytes(ctx context.Context) (float64, error) {
	var inline sql.NullFloat64
	var count, chunkBytes int64
	err := st.db.QueryRowContext(ctx, `SELECT
		(SELECT avg(coalesce(length(request), 0) + coalesce(length(forwarded), 0) + coalesce(length(reply), 0))
			FROM (SELECT * FROM exchange_bodies ORDER BY exchange_seq LIMIT 100)),
		(SELECT count(*) FROM exchange_bodies),
		(SELECT coalesce(sum(length(data)), 0) FROM body_chunks)`).Scan(&inline, &count, &chunkBytes)
	if err != nil || !inline.Valid || count == 0 {
		return 0, err
	}
	return inline.Float64 + float64(chunkBytes)/float64(count), nil
}

// rowsWorth is how many rows of about rowBytes each make up excess bytes (at least one).
func rowsWorth(excess int64, rowBytes float64) int64 {
	if rowBytes < 1 {
		rowBytes = 1
	}
	return max(1, int64(float64(excess)/rowBytes)+1)
}

// usedBytes is the size of the pages holding data: the file's size once free pages are
// released.
func (st *Store) usedBytes(ctx context.Context) (int64, error) {
	var pages, free, size int64
	err := st.db.QueryRowContext(ctx, `SELECT p.page_count, f.freelist_count, s.page_size
		FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s`).Scan(&pages, &free, &size)
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return (pages - free) * size, nil
}

// HistorySize is the database's size in bytes as retention counts it (pages in use).
func (st *Store) HistorySize(ctx context.Context) (int64, error) { return st.usedBytes(ctx) }

// releaseSpace gives free pages back to the file system: incremental_vacuum moves them to the
// end of the file and truncates it (with auto_vacuum=INCREMENTAL), and a TRUNCATE checkpoint
// copies that into the main file and empties the WAL, which would otherwise keep growing.
func (st *Store) releaseSpace(ctx context.Context) error {
	conn, err := st.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("release space: %w", err)
	}
	defer conn.Close() //nolint:errcheck // returns the connection to the pool
	rows, err := conn.QueryContext(ctx, `PRAGMA incremental_vacuum`)
	if err != nil {
		return fmt.Errorf("incremental vacuum: %w", err)
	}
	for rows.Next() { // the pragma runs as its rows are stepped
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("incremental vacuum: %w", err)
	}
	var busy, logPages, done int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &done); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// EnableIncrementalVacuum switches the database to auto_vacuum=INCREMENTAL, without which
// deleted history would stay in the file as free pages forever. The mode can only be chosen
// before the first table exists or by rebuilding the file (VACUUM), and store.Open creates
// tables at once, so a database still in mode NONE is rebuilt here — once, in the background:
// on a fresh install that takes milliseconds. It reports whether a rebuild ran.
func (st *Store) EnableIncrementalVacuum(ctx context.Context) (bool, error) {
	conn, err := st.db.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("enable incremental vacuum: %w", err)
	}
	defer conn.Close() //nolint:errcheck // returns the connection to the pool
	// The pragma answers from what the connection last read of the header; a read
	// transaction first makes that current (another process may have converted the file).
	var mode int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&mode); err != nil {
		return false, fmt.Errorf("read auto_vacuum: %w", err)
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return false, fmt.Errorf("read auto_vacuum: %w", err)
	}
	const incremental = 2
	if mode == incremental {
		return false, nil
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return false, fmt.Errorf("set auto_vacuum: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return false, fmt.Errorf("vacuum: %w", err)
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != incremental {
		return true, fmt.Errorf("auto_vacuum is %d after VACUUM (want %d): %v", mode, incremental, err)
	}
	return true, nil
}
