package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fullExchange sets every field a history row holds, so a round trip proves each one.
func fullExchange(i int, start time.Time) Exchange {
	return Exchange{
		ID: fmt.Sprintf("lh_%06d", i), State: "finished", Route: "messages", Method: "POST", Path: "/v1/messages",
		ClientProtocol: []string{"anthropic", "openai-chat"}[i%2], UpstreamProtocol: "anthropic",
		UserAgent: "claude-cli/2.1.0", RemoteAddr: "127.0.0.1:5000" + fmt.Sprint(i%10), SessionID: fmt.Sprintf("sess-%d", i%3),
		Model: "claude-sonnet-4-5", ModelSent: "claude-sonnet-4-5-20250929", Stream: i%2 == 0,
		AccountID: int64(1 + i%2), AccountName: []string{"work", "home"}[i%2],
		Start: start, FirstByte: start.Add(120 * time.Millisecond), End: start.Add(2 * time.Second),
		Duration: 2 * time.Second, TTFB: 120 * time.Millisecond,
		Status: 200, ErrorType: "", ErrorMessage: "", StreamOutcome: "complete", StopReason: "end_turn",
		InputTokens: 1000 + int64(i), OutputTokens: 50, CacheReadTokens: 900, CacheWriteTokens: 10,
		ContextLimit: 200000, TokensBefore: 120000, TokensAfter: 70000, PressureBefore: 0.6, PressureAfter: 0.35,
		Layers: []string{"tool-results", "Layer-1"}, TokensSaved: 50000, SignatureRecoveries: 2, CrossModelDropped: 1,
		Signatures: 3, ToolUseIDs: []string{"toolu_01", "toolu_02"}, BytesIn: 4096, BytesOut: 2048,
		Tools: 31 + i, ToolTokens: 9000, ToolsCalled: []string{"read_file", "bash", "read_file"},
		HasBodies: true, BodiesTruncated: true,
		Attempts: []Attempt{
			{AccountID: 2, AccountName: "home", Status: 429, Error: "rate limited", Start: start, Duration: 30 * time.Millisecond},
			{AccountID: int64(1 + i%2), AccountName: []string{"work", "home"}[i%2], Status: 200, Start: start.Add(40 * time.Millisecond), Duration: 1900 * time.Millisecond},
		},
		Compaction: []CompactionStep{
			{Layer: "tool-results", TokensBefore: 120000, TokensAfter: 100000, RawBefore: 110000, RawAfter: 92000, Items: 3, Duration: time.Millisecond,
				Edits: []Edit{{Kind: "result-shortened", Message: 4, Through: 4, Block: 1, Count: 1, TokensBefore: 9000, TokensAfter: 800,
					Before: "line 1 of a long <log> & more", After: "line 1 … [8200 tokens elided]", Note: "toolu_01"}}},
			{Layer: "Layer-1", TokensBefore: 100000, TokensAfter: 70000, RawBefore: 92000, RawAfter: 64000, Items: 2, Duration: 2 * time.Millisecond, CacheHit: true,
				Edits: []Edit{{Kind: "rounds-removed", Message: 1, Through: 6, Block: -1, Count: 6, TokensBefore: 30000, Before: "assistant: [tool_use bash toolu_00]"}}},
		},
		Bodies: &Bodies{
			Request:   `{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hello ` + fmt.Sprint(i) + `"}]}`,
			Forwarded: `{"model":"claude-sonnet-4-5-20250929","messages":[]}`,
			Reply:     `{"id":"msg_1","content":[{"type":"text","text":"hi"}]}`,
		},
	}
}

func writeAll(tb testing.TB, st *Store, batch ...Exchange) {
	tb.Helper()
	if err := st.WriteExchanges(context.Background(), batch); err != nil {
		tb.Fatalf("WriteExchanges: %v", err)
	}
}

func TestHistoryMigrationAndVacuumMode(t *testing.T) {
	// A database from before auto_vacuum was set at creation: its first
	// table came first, so it is in mode NONE until rebuilt.
	path := filepath.Join(t.TempDir(), "longhaul.db")
	legacy, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := legacy.Exec(`CREATE TABLE legacy (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	if err := legacy.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := openAt(t, path)
	ctx := context.Background()
	for _, table := range []string{"exchanges", "exchange_attempts", "exchange_compaction", "exchange_bodies"} {
		countRows(t, st, table) // fails the test if the table is missing
	}
	if got := countRows(t, st, "schema_migrations WHERE name = '002_history.sql'"); got != 1 {
		t.Errorf("002_history.sql recorded %d times; want 1", got)
	}
	writeAll(t, st, fullExchange(1, testNow))
	rebuilt, err := st.EnableIncrementalVacuum(ctx)
	if err != nil || !rebuilt {
		t.Fatalf("EnableIncrementalVacuum() = %t, %v; want a rebuild of a mode-NONE database", rebuilt, err)
	}
	again, _ := openAt(t, path)
	var mode int
	if err := again.db.QueryRow(`PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
		t.Errorf("auto_vacuum after reopen = %d, %v; want 2 (INCREMENTAL)", mode, err)
	}
	if rebuilt, err := again.EnableIncrementalVacuum(ctx); err != nil || rebuilt {
		t.Errorf("EnableIncrementalVacuum() again = %t, %v; want no rebuild", rebuilt, err)
	}
	if _, err := again.Exchange(ctx, "lh_000001"); err != nil {
		t.Errorf("Exchange after the rebuild: %v; want the data kept", err)
	}
}

func TestExchangeRoundTripEveryField(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	want := fullExchange(7, testNow)

	started := Exchange{ID: want.ID, State: "started", Route: want.Route, Method: want.Method, Path: want.Path, Start: want.Start, Model: want.Model, SessionID: want.SessionID}
	writeAll(t, st, started)
	first, err := st.Exchange(ctx, want.ID)
	if err != nil || first.State != "started" || first.HasBodies {
		t.Fatalf("Exchange(started) = %+v, %v", first, err)
	}
	writeAll(t, st, want)
	got, err := st.Exchange(ctx, want.ID)
	if err != nil {
		t.Fatalf("Exchange: %v", err)
	}
	if got.Seq != first.Seq {
		t.Errorf("seq after finishing = %d; want %d (the row updated in place)", got.Seq, first.Seq)
	}
	want.Seq = got.Seq
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("round trip differs:\n got %s\nwant %s", gj, wj)
	}
	page, err := st.ListExchanges(ctx, HistoryFilter{})
	if err != nil || len(page.Exchanges) != 1 {
		t.Fatalf("ListExchanges = %+v, %v", page, err)
	}
	if l := page.Exchanges[0]; l.Bodies != nil || l.Attempts != nil || l.Compaction != nil {
		t.Errorf("list row carries detail (bodies %v, attempts %v, steps %v); want none", l.Bodies, l.Attempts, l.Compaction)
	}
	if _, err := st.Exchange(ctx, "lh_missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Exchange(missing) = %v; want ErrNotFound", err)
	}
}

func TestListFilters(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	var batch []Exchange
	for i := range 30 {
		e := fullExchange(i, testNow.Add(time.Duration(i)*time.Minute))
		e.Bodies = nil
		switch {
		case i%10 == 3:
			e.Status, e.ErrorType, e.ErrorMessage = 529, "overloaded_error", "upstream overloaded"
		case i%10 == 5:
			e.Status, e.StreamOutcome, e.ErrorType = 499, "client_cancelled", "client_cancelled"
		case i%10 == 7:
			e.Route, e.Path, e.Model, e.ModelSent = "count_tokens", "/v1/messages/count_tokens", "claude-haiku-4-5", "claude-haiku-4-5"
		}
		if i%4 != 0 {
			e.Layers, e.Compaction = []string{}, nil
		}
		batch = append(batch, e)
	}
	writeAll(t, st, batch...)
	ids := func(f HistoryFilter) []string {
		t.Helper()
		page, err := st.ListExchanges(ctx, f)
		if err != nil {
			t.Fatalf("ListExchanges(%+v): %v", f, err)
		}
		var out []string
		for _, e := range page.Exchanges {
			out = append(out, strings.TrimPrefix(e.ID, "lh_0000"))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    HistoryFilter
		want []string
	}{
		{"time range", HistoryFilter{Since: testNow.Add(10 * time.Minute), Until: testNow.Add(13 * time.Minute)}, []string{"12", "11", "10"}},
		{"5xx", HistoryFilter{StatusClass: "5xx"}, []string{"23", "13", "03"}},
		{"errors include hang-ups", HistoryFilter{StatusClass: "error", Since: testNow.Add(20 * time.Minute)}, []string{"25", "23"}},
		{"model sent or asked", HistoryFilter{Model: "claude-haiku-4-5"}, []string{"27", "17", "07"}},
		{"account by name", HistoryFilter{Account: "home", Until: testNow.Add(6 * time.Minute)}, []string{"05", "03", "01"}},
		{"account by id", HistoryFilter{Account: "2", Until: testNow.Add(6 * time.Minute)}, []string{"05", "03", "01"}},
		{"session", HistoryFilter{Session: "sess-2", Until: testNow.Add(9 * time.Minute)}, []string{"08", "05", "02"}},
		{"route", HistoryFilter{Route: "count_tokens"}, []string{"27", "17", "07"}},
		{"compaction applied", HistoryFilter{Compacted: true, Since: testNow.Add(15 * time.Minute)}, []string{"28", "24", "20", "16"}},
		{"text in error", HistoryFilter{Text: "overloaded"}, []string{"23", "13", "03"}},
		{"text in path", HistoryFilter{Text: "count_tok"}, []string{"27", "17", "07"}},
		{"text is literal, not a pattern", HistoryFilter{Text: "%"}, nil},
		{"limit", HistoryFilter{Limit: 2}, []string{"29", "28"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ids(tc.f); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ListExchanges(%+v) = %v; want %v", tc.f, got, tc.want)
			}
		})
	}
}

// TestPagingWhileRowsArrive pages through the history while a writer keeps adding rows (and
// finishing started ones): every row that existed at the first page appears exactly once.
func TestPagingWhileRowsArrive(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	var batch []Exchange
	for i := range 250 {
		e := fullExchange(i, testNow.Add(time.Duration(i)*time.Second))
		e.Bodies = nil
		if i%5 == 0 {
			e.State = "started" // finished later, while paging
		}
		batch = append(batch, e)
	}
	writeAll(t, st, batch...)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 250; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			e := fullExchange(i, testNow.Add(time.Duration(i)*time.Second))
			e.Bodies = nil
			fin := fullExchange(i-250, testNow.Add(time.Duration(i-250)*time.Second))
			fin.Bodies = nil
			if err := st.WriteExchanges(ctx, []Exchange{e, fin}); err != nil {
				t.Errorf("WriteExchanges: %v", err)
				return
			}
		}
	})
	seen := map[string]int{}
	f := HistoryFilter{Limit: 17}
	first := true
	var top int64
	for {
		page, err := st.ListExchanges(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Exchanges {
			if first && top == 0 {
				top = e.Seq
			}
			if e.Seq <= top {
				seen[e.ID]++
			}
		}
		first = false
		if page.Next == 0 {
			break
		}
		f.Before = page.Next
		time.Sleep(time.Millisecond) // let the writer in between pages
	}
	close(stop)
	wg.Wait()
	if len(seen) < 250 {
		t.Errorf("paging saw %d distinct rows; want at least the 250 present at the start", len(seen))
	}
	for i := range 250 {
		if n := seen[fmt.Sprintf("lh_%06d", i)]; n != 1 {
			t.Errorf("row %d seen %d times; want once", i, n)
		}
	}
}

// plantedSecrets are keys a careless client or tool might put anywhere.
var plantedSecrets = []string{
	"sk-ant-api03-PLANTEDsecretAAAAbbbbCCCCdddd0123456789-xyzw",
	"sk-proj-PLANTEDopenaiKEY0123456789abcdefABCDEF",
	"AIzaSyPLANTEDgoogleKey0123456789abcdefgh",
	"PLANTEDbearerTOKEN.eyJhbGciOiJIUzI1NiJ9.payload",
	"PLANTEDxapikeyVALUE0123456789",
}

func TestPlantedSecretsNeverReachTheFile(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	e := fullExchange(1, testNow)
	e.UserAgent = "my-script/1.0 (key " + plantedSecrets[0] + ")"
	e.Path = "/v1/messages/" + plantedSecrets[2]
	e.ErrorMessage = `upstream said: invalid x-api-key: ` + plantedSecrets[4]
	e.Attempts[0].Error = "Authorization: Bearer " + plantedSecrets[3]
	e.Bodies = &Bodies{
		Request:   `{"messages":[{"role":"user","content":"my key is ` + plantedSecrets[0] + ` and ` + plantedSecrets[1] + `"}],"metadata":{"x-api-key":"` + plantedSecrets[4] + `"}}`,
		Forwarded: `{"system":"Authorization: Bearer ` + plantedSecrets[3] + `"}`,
		Reply:     `{"content":[{"type":"text","text":"your google key ` + plantedSecrets[2] + `"}]}`,
	}
	writeAll(t, st, e)
	var export bytes.Buffer
	if _, err := st.ExportExchanges(ctx, HistoryFilter{}, &export); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(export.String(), "sk-ant-…[redacted]") {
		t.Errorf("export has no masked key; want the masked form kept:\n%s", export.String())
	}
	files := map[string][]byte{"export": export.Bytes()}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatalf("read %s: %v", path+suffix, err)
		}
		files["db"+suffix] = b
	}
	for name, b := range files {
		for _, secret := range plantedSecrets {
			if n := bytes.Count(b, []byte(secret)); n != 0 {
				t.Errorf("%s contains planted secret %q %d times; want 0", name, secret, n)
			}
			if n := bytes.Count(b, []byte(secret[len(secret)-20:len(secret)-4])); n != 0 {
				t.Errorf("%s contains the middle of %q %d times; want 0", name, secret, n)
			}
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"key sk-ant-api03-abcdefghijklmnop0123 end", "key sk-ant-…[redacted]0123 end"},
		{"sk-abcdefghijklmnopqrstuvwx", "sk-…[redacted]uvwx"},
		{"AIzaSyA1234567890abcdefghijklmnopqrstu", "AIza…[redacted]rstu"},
		{"Authorization: Bearer abc.def.ghijklmnopqrstuvwxyz", "Authorization: Bearer …[redacted]wxyz"},
		{`{"x-api-key": "zzzzzzzzzzzzzzzzzzzz"}`, `{"x-api-key": "…[redacted]zzzz"}`},
		{`X-Api-Key=shortish12345`, `X-Api-Key=…[redacted]`},
		{"task-manager-for-everyone and ask-me-anything-please", "task-manager-for-everyone and ask-me-anything-please"},
		{"sk-short", "sk-short"},
		{"the bearer of bad news", "the bearer of bad news"},
		{"no secrets here", "no secrets here"},
		{"", ""},
	} {
		got := RedactString(tc.in)
		if got != tc.want {
			t.Errorf("RedactString(%q) = %q; want %q", tc.in, got, tc.want)
		}
		if again := RedactString(got); again != got {
			t.Errorf("RedactString is not idempotent on %q: %q", got, again)
		}
	}
}

func TestExportRoundTrip(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	for i := range 5 {
		writeAll(t, st, fullExchange(i, testNow.Add(time.Duration(i)*time.Hour)))
	}
	var buf bytes.Buffer
	n, err := st.ExportExchanges(ctx, HistoryFilter{Since: testNow.Add(time.Hour), Session: "sess-1"}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []Exchange
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e Exchange
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	if n != 2 || len(got) != 2 || got[0].ID != "lh_000001" || got[1].ID != "lh_000004" {
		t.Fatalf("export = %d lines %v; want lh_000001 then lh_000004 (oldest first)", n, got)
	}
	for _, e := range got {
		want, err := st.Exchange(ctx, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(e, want) {
			t.Errorf("exported %s differs from the stored detail:\n got %+v\nwant %+v", e.ID, e, want)
		}
	}
}

func TestSessionsAndStats(t *testing.T) {
	st, _ := openTemp(t)
	ctx := context.Background()
	var batch []Exchange
	for i := range 12 {
		e := fullExchange(i, testNow.Add(time.Duration(i)*20*time.Minute))
		if i == 11 {
			e.Status, e.ErrorType = 529, "overloaded_error"
		}
		batch = append(batch, e)
	}
	writeAll(t, st, batch...)
	sessions, err := st.Sessions(ctx, time.Time{}, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 3 || sessions[0].ID != "sess-2" {
		t.Fatalf("Sessions = %+v; want 3, sess-2 (latest) first", sessions)
	}
	s := sessions[0] // exchanges 2, 5, 8, 11
	if s.Requests != 4 || s.Errors != 1 || s.LastAccount != "home" || s.TokensSaved != 4*50000 ||
		!reflect.DeepEqual(s.LayersFired, []string{"tool-results", "Layer-1"}) || s.Pressure != 0.35 ||
		s.Tokens != 70000 || s.ContextLimit != 200000 || !s.FirstSeen.Equal(testNow.Add(40*time.Minute)) ||
		!s.LastSeen.Equal(testNow.Add(220*time.Minute)) || s.InputTokens != 1002+1005+1008+1011 {
		t.Errorf("session sess-2 = %+v", s)
	}

	stats, err := st.HistoryStats(ctx, testNow, testNow.Add(24*time.Hour), "hour", nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Total.Requests != 12 || stats.Total.Errors != 1 || stats.Total.TokensSaved != 12*50000 || stats.Total.OutputTokens != 12*50 {
		t.Errorf("stats total = %+v", stats.Total)
	}
	if len(stats.ByAccount) != 2 || stats.ByAccount[0].Requests != 6 {
		t.Errorf("stats by account = %+v; want 2 accounts of 6", stats.ByAccount)
	}
	if len(stats.ByModel) != 1 || stats.ByModel[0].Key != "claude-sonnet-4-5-20250929" {
		t.Errorf("stats by model = %+v; want the model sent", stats.ByModel)
	}
	if len(stats.ByTime) != 4 || !stats.ByTime[0].Bucket.Equal(testNow) || stats.ByTime[0].Requests != 3 {
		t.Errorf("stats by hour = %+v; want 4 hours of 3", stats.ByTime)
	}
	day, err := st.HistoryStats(ctx, testNow, testNow.Add(24*time.Hour), "day", nil)
	if err != nil || len(day.ByTime) != 1 || day.ByTime[0].Requests != 12 {
		t.Errorf("stats by day = %+v, %v; want one day of 12", day.ByTime, err)
	}
}

func TestLateStartedRecordDoesNotRegressFinished(t *testing.T) {
	st, _ := openTemp(t)
	fin := fullExchange(3, testNow)
	writeAll(t, st, fin)
	writeAll(t, st, Exchange{ID: fin.ID, State: "started", Start: fin.Start})
	got, err := st.Exchange(context.Background(), fin.ID)
	if err != nil || got.State != "finished" || got.Status != 200 || got.Bodies == nil {
		t.Errorf("after a late started record: %+v, %v; want the finished row unchanged", got, err)
	}
}

// TestHistoryMigrationUpgradesAnExistingDatabase opens a database as the previous version left
// it (settings and accounts, no history tables) and checks 002 is applied with the data kept
// (and 006–011, which add columns to the tables 002 creates).
func TestHistoryMigrationUpgradesAnExistingDatabase(t *testing.T) {
	st, path := openTemp(t)
	ctx := context.Background()
	if _, err := st.SetSetting(ctx, "proxy.port", "9001"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE exchange_bodies`, `DROP TABLE exchange_compaction`, `DROP TABLE exchange_attempts`, `DROP TABLE exchanges`,
		`DELETE FROM schema_migrations WHERE name IN ('002_history.sql', '006_account_kinds.sql', '007_attempts_in_row.sql', '008_inventory.sql', '009_replay_of.sql', '010_ledger.sql', '011_window_and_cache.sql')`,
	} {
		if _, err := st.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	again, _ := openAt(t, path)
	writeAll(t, again, fullExchange(1, testNow))
	if _, err := again.Exchange(ctx, "lh_000001"); err != nil {
		t.Errorf("history after the upgrade: %v", err)
	}
	if v, err := again.GetSetting(ctx, "proxy.port"); err != nil || v != "9001" {
		t.Errorf("proxy.port after the upgrade = %q, %v; want 9001 kept", v, err)
	}
}
