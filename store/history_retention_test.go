package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"reflect"
	"testing"
	"time"
)

func TestRetentionByAgeDropsBodiesFirst(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	now := testNow
	st.Now = func() time.Time { return now }
	ages := map[string]time.Duration{"lh_000000": 100 * 24 * time.Hour, "lh_000001": 30 * 24 * time.Hour, "lh_000002": 6 * 24 * time.Hour, "lh_000003": time.Hour}
	for i, id := range []string{"lh_000000", "lh_000001", "lh_000002", "lh_000003"} {
		writeAll(t, st, fullExchange(i, now.Add(-ages[id])))
	}
	res, err := st.ApplyRetention(ctx, Retention{BodyAge: 7 * 24 * time.Hour, MetadataAge: 90 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.BodiesDeleted != 2 || res.ExchangesDeleted != 1 {
		t.Errorf("ApplyRetention = %+v; want 2 bodies (30 d, 100 d) and 1 exchange (100 d) deleted", res)
	}
	for _, tc := range []struct {
		id         string
		exists     bool
		withBodies bool
	}{{"lh_000000", false, false}, {"lh_000001", true, false}, {"lh_000002", true, true}, {"lh_000003", true, true}} {
		e, err := st.Exchange(ctx, tc.id)
		if exists := err == nil; exists != tc.exists {
			t.Errorf("%s exists = %t (%v); want %t", tc.id, exists, err, tc.exists)
			continue
		}
		if tc.exists && (e.Bodies != nil) != tc.withBodies {
			t.Errorf("%s has bodies = %t; want %t", tc.id, e.Bodies != nil, tc.withBodies)
		}
		if tc.exists && len(e.Attempts) != 2 {
			t.Errorf("%s attempts = %d; want 2 (metadata kept with the row)", tc.id, len(e.Attempts))
		}
	}
}

// Rows written before migration 007 keep their attempts in exchange_attempts: they read back
// from there, and go with their exchange when retention deletes it.
func TestAttemptsOfRowsFromBeforeMigration007(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	old := fullExchange(0, testNow.Add(-100*24*time.Hour))
	writeAll(t, st, old, fullExchange(1, testNow))
	for _, q := range []string{ // exchange 0 as the writer before 007 left it
		`INSERT INTO exchange_attempts (exchange_seq, n, account_id, account_name, status, error, start_ns, duration_ns)
			SELECT e.seq, a.key, a.value ->> 'account_id', a.value ->> 'account_name', a.value ->> 'status',
				a.value ->> 'error', a.value ->> 'start_ns', a.value ->> 'duration_ns'
			FROM exchanges e, json_each(e.attempts) a WHERE e.id = 'lh_000000'`,
		`UPDATE exchanges SET attempts = '' WHERE id = 'lh_000000'`,
	} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	e, err := st.Exchange(ctx, "lh_000000")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(e.Attempts, old.Attempts) {
		t.Errorf("attempts of a row from before 007 = %+v; want %+v", e.Attempts, old.Attempts)
	}
	if _, err := st.ApplyRetention(ctx, Retention{MetadataAge: 90 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, "exchange_attempts"); n != 0 {
		t.Errorf("attempt rows after retention deleted their exchange = %d; want 0", n)
	}
}

func fileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	var total int64
	for _, suffix := range []string{"", "-wal"} {
		info, err := os.Stat(path + suffix)
		if err == nil {
			total += info.Size()
		}
	}
	return total
}

// TestRetentionBySizeShrinksTheFile fills the history with incompressible bodies, caps the
// database well below its size, and checks that the oldest go first, bodies before metadata,
// and that the file on disk really gets smaller.
func TestRetentionBySizeShrinksTheFile(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	if _, err := st.EnableIncrementalVacuum(ctx); err != nil {
		t.Fatal(err)
	}
	noise := make([]byte, 48<<10)
	for i := range 200 { // ≈ 200 × 64 KB of base64 noise ≈ 13 MB
		e := fullExchange(i, testNow.Add(time.Duration(i)*time.Second))
		rand.Read(noise) //nolint:errcheck
		e.Bodies.Request = base64.StdEncoding.EncodeToString(noise)
		writeAll(t, st, e)
	}
	before := fileSize(t, path)
	const max = 4 << 20
	res, err := st.ApplyRetention(ctx, Retention{MaxBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	after := fileSize(t, path)
	t.Logf("file %d → %d bytes (cap %d); %+v", before, after, max, res)
	if before < 8<<20 {
		t.Fatalf("file before = %d; the test needs a database well over the cap", before)
	}
	if after > max || res.SizeAfter > max {
		t.Errorf("file after retention = %d bytes (in use %d); want ≤ %d", after, res.SizeAfter, max)
	}
	if res.ExchangesDeleted != 0 || res.BodiesDeleted == 0 {
		t.Errorf("ApplyRetention = %+v; want only bodies deleted (bodies go before metadata)", res)
	}
	if n := countRows(t, st, "exchanges"); n != 200 {
		t.Errorf("exchanges = %d; want all 200 kept", n)
	}
	// The oldest bodies went: the newest still has its body, the oldest has none.
	if e, err := st.Exchange(ctx, "lh_000199"); err != nil || e.Bodies == nil {
		t.Errorf("newest exchange bodies = %v, %v; want kept", e.Bodies, err)
	}
	if e, err := st.Exchange(ctx, "lh_000000"); err != nil || e.Bodies != nil {
		t.Errorf("oldest exchange bodies = %v, %v; want dropped", e.Bodies, err)
	}

	// A cap below what the metadata alone needs takes the oldest exchanges too.
	if _, err := st.db.Exec(`DELETE FROM exchange_bodies`); err != nil {
		t.Fatal(err)
	}
	var batch []Exchange
	for i := 200; i < 6200; i++ {
		e := fullExchange(i, testNow.Add(time.Duration(i)*time.Second))
		e.Bodies = nil
		batch = append(batch, e)
	}
	writeAll(t, st, batch...)
	res, err = st.ApplyRetention(ctx, Retention{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExchangesDeleted == 0 || res.SizeAfter > 1<<20 {
		t.Errorf("ApplyRetention(1 MiB) = %+v; want exchanges deleted down to the cap", res)
	}
	if _, err := st.Exchange(ctx, "lh_006199"); err != nil {
		t.Errorf("newest exchange after size retention: %v; want kept", err)
	}
	if _, err := st.Exchange(ctx, "lh_000000"); err == nil {
		t.Errorf("oldest exchange still there after size retention; want deleted first")
	}
}
