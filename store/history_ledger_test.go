package store

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
)

// ledgerExchange is a compacted request whose ledger holds every shape of edit: a span of
// removed messages, a block, one built by the step (-1), the proxy's model map.
func ledgerExchange() Exchange {
	e := fullExchange(3, testNow)
	e.Compaction = []CompactionStep{
		{Layer: "Layer-1", TokensBefore: 90000, TokensAfter: 60000, RawBefore: 80000, RawAfter: 52000, Items: 1, Edits: []Edit{
			{Kind: "rounds-removed", Message: 3, Through: 40, Block: -1, Count: 38, TokensBefore: 28000, Before: "assistant: [tool_use bash toolu_03]"},
		}},
		{Layer: "Layer-2", TokensBefore: 60000, TokensAfter: 52000, RawBefore: 52000, RawAfter: 45000, Items: 2, Edits: []Edit{
			{Kind: "thinking-elided", Message: 41, Through: 41, Block: 0, Count: 1, TokensBefore: 4000, TokensAfter: 3, Before: "Let me think about the \"parser\"…", After: "...", Note: "thinking"},
			{Kind: "more", Message: -1, Through: -1, Block: -1, Count: 12, TokensBefore: 3000, TokensAfter: 36},
		}},
		{Layer: "Layer-3", TokensBefore: 52000, TokensAfter: 20000, Items: 1, Edits: []Edit{
			{Kind: "summary-added", Message: -1, Through: -1, Block: -1, Count: 1, TokensAfter: 900, After: "user: Summary of the conversation so far: 漢字"},
		}},
		{Layer: "model-map", Items: 1, Edits: []Edit{
			{Kind: "model-renamed", Message: -1, Through: -1, Block: -1, Count: 1, Before: "claude-sonnet-4-5", After: "claude-sonnet-4-5-20250929", Note: "proxy.model_map"},
		}},
		{Layer: "purify", TokensBefore: 20000, TokensAfter: 20000}, // a step that recorded no edit
	}
	return e
}

func TestLedgerRoundTrips(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	want := ledgerExchange()
	writeAll(t, st, want)
	got, err := st.Exchange(ctx, want.ID)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	if !reflect.DeepEqual(got.Compaction, want.Compaction) {
		t.Errorf("compaction steps read back as\n%+v\nwant\n%+v", got.Compaction, want.Compaction)
	}
	var stored string
	if err := st.db.QueryRow(`SELECT edits FROM exchange_compaction WHERE n = 4`).Scan(&stored); err != nil || stored != "" {
		t.Errorf("edits column of a step without edits = %q, %v; want ''", stored, err)
	}
}

func TestLedgerPreviewsAreRedacted(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	e := ledgerExchange()
	key, bearer := plantedSecrets[0], plantedSecrets[3]
	e.Compaction[0].Edits[0].Before = "user: here is my key " + key + " please use it"
	e.Compaction[1].Edits[0].After = `{"headers":{"Authorization":"Bearer ` + bearer + `"}}`
	e.Compaction[1].Edits[0].Note = "bash " + key // blockNote of a tool_use: name and id
	callers := e.Compaction[0].Edits[0].Before
	writeAll(t, st, e)
	if e.Compaction[0].Edits[0].Before != callers {
		t.Errorf("the writer changed the caller's edit to %q; want it untouched", e.Compaction[0].Edits[0].Before)
	}
	got, err := st.Exchange(ctx, e.ID)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	first := got.Compaction[0].Edits[0].Before
	if strings.Contains(first, key) || !strings.Contains(first, "sk-ant-…[redacted]") || !strings.HasSuffix(first, " please use it") {
		t.Errorf("preview with a key read back as %q; want the key masked, the rest kept", first)
	}
	if ed := got.Compaction[1].Edits[0]; strings.Contains(ed.After, bearer) || strings.Contains(ed.Note, key) {
		t.Errorf("edit read back as %+v; want the bearer token and the key masked", ed)
	}
	live := RedactExchange(e)
	if s := string(AppendExchangesJSON(nil, []Exchange{live})); strings.Contains(s, key) || strings.Contains(s, bearer) {
		t.Errorf("the live feed's record holds a planted secret: %s", s)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatalf("read %s: %v", path+suffix, err)
		}
		for _, secret := range []string{key, bearer} {
			if strings.Contains(string(b), secret) {
				t.Errorf("db%s contains the planted secret %q; want it masked", suffix, secret)
			}
		}
	}
}

// TestStepsRecordedBeforeTheLedgerReadBackWithoutEdits: a database whose steps were written
// before migration 010 gets the column, and those steps read back with no edits.
func TestStepsRecordedBeforeTheLedgerReadBackWithoutEdits(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	old := fullExchange(5, testNow)
	for i := range old.Compaction {
		old.Compaction[i].Edits = nil
	}
	writeAll(t, st, old)
	// Back to the schema before 010: the column gone, the migration not applied.
	for _, q := range []string{
		`ALTER TABLE exchange_compaction DROP COLUMN edits`,
		`DELETE FROM schema_migrations WHERE name = '010_ledger.sql'`,
	} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	again, _ := openAt(t, path)
	got, err := again.Exchange(ctx, old.ID)
	if err != nil {
		t.Fatalf("Exchange after the upgrade: %v", err)
	}
	if len(got.Compaction) != len(old.Compaction) {
		t.Fatalf("read %d steps; want %d", len(got.Compaction), len(old.Compaction))
	}
	for i, c := range got.Compaction {
		if c.Edits != nil || c.Layer != old.Compaction[i].Layer {
			t.Errorf("step %d read back as %+v; want layer %q and no edits", i, c, old.Compaction[i].Layer)
		}
	}
	newer := ledgerExchange()
	newer.ID = "lh_after_010"
	writeAll(t, again, newer)
	if got, err := again.Exchange(ctx, newer.ID); err != nil || !reflect.DeepEqual(got.Compaction, newer.Compaction) {
		t.Errorf("a ledger written after the upgrade read back as %+v, %v; want %+v", got.Compaction, err, newer.Compaction)
	}
}
