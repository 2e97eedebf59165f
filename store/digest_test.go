package store

import (
	"context"
	"slices"
	"testing"
)

// digested is sessionExchange(i) with its request body digested ahead of its batch, as the
// recorder does with large bodies.
func digested(t *testing.T, st *Store, i int, body string) Exchange {
	t.Helper()
	e := sessionExchange(i, body)
	if err := st.DigestRequest(&e); err != nil {
		t.Fatalf("DigestRequest(%d): %v", i, err)
	}
	if e.Bodies.Request != "" || e.Bodies.RequestDigest == nil {
		t.Fatalf("exchange %d: the request body is still held after its digest", i)
	}
	return e
}

// A session's bodies digested ahead of their batches read back byte-identical: batches of one
// turn, of several turns of the session written in reverse order (a turn reuses by hash the
// chunks the turn before it cut), mixed with bodies written whole, and after the sweep
// generation moved between the digest and the batch (the ids it knew are then not trusted).
func TestDigestedBodiesReadBackByteIdentical(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	bodies := growingSession(24)
	for i := range 4 {
		writeAll(t, st, digested(t, st, i, bodies[i]))
	}
	batch := []Exchange{digested(t, st, 4, bodies[4]), digested(t, st, 5, bodies[5]), digested(t, st, 6, bodies[6])}
	slices.Reverse(batch)
	writeAll(t, st, batch...)
	writeAll(t, st, sessionExchange(7, bodies[7])) // whole, after digests of its session
	writeAll(t, st, digested(t, st, 8, bodies[8]))
	d := digested(t, st, 9, bodies[9])
	if _, err := st.db.ExecContext(ctx, `UPDATE body_sweep SET gen = gen + 1`); err != nil {
		t.Fatal(err)
	}
	writeAll(t, st, d)
	for i := 10; i < 24; i++ {
		writeAll(t, st, digested(t, st, i, bodies[i]))
	}
	checkBodies(t, st, bodies, 0, 24)
	if n := st.BodiesLost(); n != 0 {
		t.Errorf("%d digested bodies lost; want none", n)
	}
	if n := st.BodiesRepeated(); n != 0 {
		t.Errorf("BodiesRepeated = %d with no repeats given; want 0", n)
	}
}

// A digest that reuses the chunks of a body whose batch was never written (given up) cannot be
// rebuilt: its row is stored without the request body, and the loss is counted, not hidden.
func TestDigestReusingAnUnwrittenBodyIsCountedLost(t *testing.T) {
	st, _ := openTemp(t)
	bodies := growingSession(6)
	writeAll(t, st, digested(t, st, 0, bodies[0]))
	_ = digested(t, st, 1, bodies[1]) // its batch never comes
	writeAll(t, st, digested(t, st, 2, bodies[2]))
	if n := st.BodiesLost(); n != 1 {
		t.Fatalf("BodiesLost = %d; want 1", n)
	}
	e, err := st.Exchange(context.Background(), "lh_000002")
	if err != nil {
		t.Fatal(err)
	}
	if e.Bodies == nil || e.Bodies.Request != "" || e.Bodies.Reply == "" {
		t.Fatalf("exchange 2: request %d bytes, reply %q; want no request body and the reply", len(e.Bodies.Request), e.Bodies.Reply)
	}
	// The session goes on: a body written whole stores the missing chunks again from its own
	// bytes, and the digest after it reads back.
	writeAll(t, st, sessionExchange(3, bodies[3]))
	writeAll(t, st, digested(t, st, 4, bodies[4]))
	checkBodies(t, st, bodies, 3, 5)
}

// Retention swept the chunks a digest knew by their rows between the digest and its batch: the
// digest does not name the deleted rows (the sweep moved the generation), it finds the chunks
// gone and counts the body lost.
func TestDigestAfterASweepDoesNotNameDeletedChunks(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	bodies := growingSession(4)
	writeAll(t, st, sessionExchange(0, bodies[0]), sessionExchange(1, bodies[1]))
	d := digested(t, st, 2, bodies[2]) // reuses exchange 1's chunks, their rows known
	if _, err := st.db.ExecContext(ctx, `DELETE FROM exchanges`); err != nil {
		t.Fatal(err)
	}
	if n, err := st.sweepChunks(ctx); err != nil || n == 0 {
		t.Fatalf("sweepChunks = %d, %v; want the unreferenced chunks deleted", n, err)
	}
	writeAll(t, st, d)
	if n := st.BodiesLost(); n != 1 {
		t.Fatalf("BodiesLost = %d; want 1", n)
	}
	e, err := st.Exchange(ctx, "lh_000002")
	if err != nil {
		t.Fatalf("Exchange: %v (a list naming deleted chunks?)", err)
	}
	if e.Bodies == nil || e.Bodies.Request != "" {
		t.Fatalf("exchange 2 holds a request body of %d bytes; want none", len(e.Bodies.Request))
	}
}

// A digest's new chunk that another body stored already is found, not stored twice, and both
// bodies read back byte-identical: a session after a restart (the writer remembers no chunk id)
// sends what an earlier one sent, as every Claude Code session repeats the system prompt and
// tools of the ones before it.
func TestDigestOfBytesAnotherSessionStoredReusesTheirChunks(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	bodies := growingSession(8)
	last := bodies[7]
	writeAll(t, st, digested(t, st, 0, last))
	chunkRows := func() (n int) {
		t.Helper()
		if err := st.db.QueryRowContext(ctx, `SELECT count(*) FROM body_chunks`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := chunkRows()
	if before < 2 {
		t.Fatalf("%d chunk rows after a large body; want it chunked", before)
	}
	restarted, _ := openAt(t, path)
	other := sessionExchange(1, last)
	other.SessionID = "sess-other"
	if err := restarted.DigestRequest(&other); err != nil {
		t.Fatal(err)
	}
	if d := other.Bodies.RequestDigest; d == nil || d.Held() == 0 {
		t.Fatal("the other session's digest holds no new chunk; want its chunks cut as new")
	}
	writeAll(t, restarted, other)
	if after := chunkRows(); after != before {
		t.Fatalf("body_chunks went from %d to %d rows for bytes already stored; want no new row", before, after)
	}
	for _, id := range []string{"lh_000000", "lh_000001"} {
		e, err := st.Exchange(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Bodies == nil || e.Bodies.Request != last {
			t.Fatalf("%s: the request body differs from what was sent", id)
		}
	}
	if n := restarted.BodiesLost(); n != 0 {
		t.Fatalf("BodiesLost = %d; want 0", n)
	}
}
