package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestDefaultSettingsAreValid(t *testing.T) {
	if err := DefaultSettings().Validate(); err != nil {
		t.Errorf("DefaultSettings().Validate() = %v; want nil", err)
	}
}

func TestSettingsRoundTripAcrossReopen(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t)
	sets := [][2]string{
		{"proxy.port", "9100"},
		{"proxy.bind", "0.0.0.0"},
		{"proxy.client_key", "local-secret-0123456789"},
		{"proxy.request_timeout", "90s"},
		{"proxy.rotation.policy", "weighted"},
		{"proxy.rotation.session_affinity", "false"},
		{"proxy.experimental.context_compression_threshold_l3", "0.8"},
		{"proxy.model_map", `[{"pattern":"claude-*","model":"claude-sonnet-4-5","account":"work"}]`},
		{"app.language", "zh-CN"},
	}
	for _, kv := range sets {
		if _, err := st.SetSetting(ctx, kv[0], kv[1]); err != nil {
			t.Fatalf("SetSetting(%q, %q) = %v; want nil", kv[0], kv[1], err)
		}
	}
	// SaveSettings on top: a whole-form save from the UI.
	s, err := st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Compaction.KeepToolRounds = 8
	if err := st.SaveSettings(ctx, s); err != nil {
		t.Fatalf("SaveSettings() = %v; want nil", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	want := DefaultSettings()
	want.Proxy.Port = 9100
	want.Proxy.Bind = "0.0.0.0"
	want.Proxy.ClientKey = "local-secret-0123456789"
	want.Proxy.RequestTimeout = Duration(90 * time.Second)
	want.Proxy.Rotation.Policy = PolicyWeighted
	want.Proxy.Rotation.SessionAffinity = false
	want.Proxy.Experimental.ContextCompressionThresholdL3 = 0.8
	want.Proxy.ModelMap = []ModelMapping{{Pattern: "claude-*", Model: "claude-sonnet-4-5", Account: "work"}}
	want.App.Language = "zh-CN"
	want.Compaction.KeepToolRounds = 8

	reopened, logs := openAt(t, path)
	got, err := reopened.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings() after reopen = %+v; want %+v", got, want)
	}
	if n := countRows(t, reopened, "settings"); n != len(sets)+1 {
		t.Errorf("settings rows = %d; want %d (only the keys set)", n, len(sets)+1)
	}
	if logs.String() != "" {
		t.Errorf("unexpected warnings: %s", logs)
	}
}

func TestSetSettingRejectsInvalidAndWritesNothing(t *testing.T) {
	const x = "proxy.experimental."
	tests := []struct {
		name, key, value, wantField string
	}{
		{"L1 above L2", x + "context_compression_threshold_l1", "0.6", x + "context_compression_threshold_l2"},
		{"L2 below L1", x + "context_compression_threshold_l2", "0.2", x + "context_compression_threshold_l2"},
		{"L3 below L2", x + "context_compression_threshold_l3", "0.5", x + "context_compression_threshold_l3"},
		{"L1 zero", x + "context_compression_threshold_l1", "0", x + "context_compression_threshold_l1"},
		{"L3 above one", x + "context_compression_threshold_l3", "1.5", x + "context_compression_threshold_l3"},
		{"threshold not a number", x + "context_compression_threshold_l1", "high", x + "context_compression_threshold_l1"},
		{"port zero", "proxy.port", "0", "proxy.port"},
		{"port not an integer", "proxy.port", "80.5", "proxy.port"},
		{"bind not an address", "proxy.bind", "my laptop", "proxy.bind"},
		{"unknown policy", "proxy.rotation.policy", "random", "proxy.rotation.policy"},
		{"too many attempts", "proxy.rotation.max_attempts", "11", "proxy.rotation.max_attempts"},
		{"negative timeout", "proxy.request_timeout", "-5s", "proxy.request_timeout"},
		{"timeout without unit", "proxy.request_timeout", "10", "proxy.request_timeout"},
		{"bool not a bool", "app.autostart", "yes please", "app.autostart"},
		{"tiny body limit", "proxy.max_body_bytes", "100", "proxy.max_body_bytes"},
		{"tiny memory budget", "proxy.memory_budget_bytes", "1048576", "proxy.memory_budget_bytes"},
		{"negative memory budget", "proxy.memory_budget_bytes", "-1", "proxy.memory_budget_bytes"},
		{"unknown language", "app.language", "fr", "app.language"},
		{"client key too short", "proxy.client_key", "fifteen-chars15", "proxy.client_key"},
		{"context limit entry zero", "proxy.context_limits.claude-opus-4*", "0", "proxy.context_limits.claude-opus-4*"},
		{"model map entry without model", "proxy.model_map", `[{"pattern":"gpt-*"}]`, "proxy.model_map"},
		{"model map entry with typo", "proxy.model_map", `[{"pattern":"gpt-*","modle":"x"}]`, "proxy.model_map"},
		{"price entry negative", "pricing.table.claude-opus-4*", `{"input":-5,"output":25}`, "pricing.table.claude-opus-4*"},
		{"price entry cache read negative", "pricing.table.gpt-5*", `{"input":1.25,"output":10,"cache_read":-1}`, "pricing.table.gpt-5*"},
		{"price entry absurd", "pricing.table.x", `{"input":2000000,"output":1}`, "pricing.table.x"},
		{"price entry with typo", "pricing.table.x", `{"input":1,"ouptut":2}`, "pricing.table.x"},
		{"price entry not an object", "pricing.table.x", `5`, "pricing.table.x"},
		{"price table empty pattern", "pricing.table", `{"":{"input":1,"output":2}}`, "pricing.table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, _ := openTemp(t)
			// One row already set, to see that a rejected write leaves it alone.
			if _, err := st.SetSetting(ctx, "compaction.keep_tool_rounds", "7"); err != nil {
				t.Fatal(err)
			}
			_, err := st.SetSetting(ctx, tt.key, tt.value)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField {
				t.Fatalf("SetSetting(%q, %q) = %v; want a ValidationError for %s", tt.key, tt.value, err, tt.wantField)
			}
			if !strings.HasPrefix(err.Error(), tt.wantField+": ") {
				t.Errorf("SetSetting(%q, %q) error = %q; want it to start with the field", tt.key, tt.value, err)
			}
			rows, err := st.db.Query(`SELECT key, value FROM settings`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var k, v string
				if err := rows.Scan(&k, &v); err != nil {
					t.Fatal(err)
				}
				got = append(got, k+"="+v)
			}
			if want := []string{"compaction.keep_tool_rounds=7"}; !reflect.DeepEqual(got, want) {
				t.Errorf("settings rows after rejected SetSetting = %q; want %q", got, want)
			}
		})
	}
}

func TestThresholdOrderMessage(t *testing.T) {
	s := DefaultSettings()
	s.Proxy.Experimental.ContextCompressionThresholdL2 = 0.3
	err := s.Validate()
	want := "proxy.experimental.context_compression_threshold_l2: must be ≥ context_compression_threshold_l1 (0.4)"
	if err == nil || err.Error() != want {
		t.Errorf("Validate() with L2 < L1 = %v; want %q", err, want)
	}
}

func TestEveryKeyCanBeGetAndSetToItsOwnValue(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	// Non-default values too, so formatting of lists and odd strings is exercised.
	if _, err := st.SetSetting(ctx, "proxy.model_map", `[{"pattern":"a*","model":"b"}]`); err != nil {
		t.Fatal(err)
	}
	before, err := st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys := SettingKeys()
	// Every setting the README documents (maps and lists count as one key); later settings come on top.
	for _, want := range []string{
		"proxy.port", "proxy.bind", "proxy.client_key", "proxy.max_body_bytes", "proxy.memory_budget_bytes", "proxy.request_timeout",
		"proxy.rotation.policy", "proxy.rotation.session_affinity", "proxy.rotation.max_attempts",
		"proxy.model_map", "proxy.context_limits",
		"proxy.experimental.enable_signature_cache", "proxy.experimental.enable_tool_loop_recovery",
		"proxy.experimental.enable_cross_model_checks", "proxy.experimental.enable_usage_scaling",
		"proxy.experimental.context_compression_threshold_l1", "proxy.experimental.context_compression_threshold_l2",
		"proxy.experimental.context_compression_threshold_l3",
		"compaction.keep_tool_rounds", "compaction.protect_last_messages", "compaction.max_tool_result_chars",
		"compaction.summary_model", "history.retention_days", "history.max_bytes", "history.store_bodies",
		"app.autostart", "app.start_minimized", "app.check_updates", "app.language", "monitor.tool_warning_count",
		"pricing.table",
	} {
		if !slices.Contains(keys, want) {
			t.Errorf("SettingKeys() lacks %q", want)
		}
	}
	for _, key := range keys {
		got, err := st.GetSetting(ctx, key)
		if err != nil {
			t.Errorf("GetSetting(%q) = %v", key, err)
			continue
		}
		if _, err := st.SetSetting(ctx, key, got); err != nil {
			t.Errorf("SetSetting(%q, %q) = %v; want its own value accepted", key, got, err)
		}
		if again, err := st.GetSetting(ctx, key); err != nil || again != got {
			t.Errorf("GetSetting(%q) after setting it = %q, %v; want %q", key, again, err, got)
		}
	}
	after, err := st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("Settings() after setting every key to itself = %+v; want %+v", after, before)
	}
}

func TestSettingValueForms(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"duration in minutes", "proxy.request_timeout", "10m", "10m0s"},
		{"duration as JSON string", "proxy.request_timeout", `"90s"`, "1m30s"},
		{"string as-is", "compaction.summary_model", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"string as JSON", "compaction.summary_model", `"claude-opus-4"`, "claude-opus-4"},
		{"bool", "history.store_bodies", "false", "false"},
		{"float", "proxy.experimental.context_compression_threshold_l1", "0.25", "0.25"},
		{"number with spaces", "proxy.port", " 8046 ", "8046"},
		{"whole map", "proxy.context_limits", `{"gpt-*": 128000}`, `{"gpt-*":128000}`},
		{"null list becomes empty", "proxy.model_map", "null", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, _ := openTemp(t)
			if _, err := st.SetSetting(ctx, tt.key, tt.value); err != nil {
				t.Fatalf("SetSetting(%q, %q) = %v; want nil", tt.key, tt.value, err)
			}
			if got, err := st.GetSetting(ctx, tt.key); err != nil || got != tt.want {
				t.Errorf("GetSetting(%q) = %q, %v; want %q", tt.key, got, err, tt.want)
			}
		})
	}
}

func TestContextLimitEntries(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)

	s, err := st.SetSetting(ctx, "proxy.context_limits.claude-opus-4*", "500000")
	if err != nil {
		t.Fatalf("SetSetting(proxy.context_limits.claude-opus-4*, 500000) = %v", err)
	}
	want := map[string]int{"claude-*": 200000, "gemini-*": 1048576, "claude-opus-4*": 500000}
	if !reflect.DeepEqual(s.Proxy.ContextLimits, want) {
		t.Errorf("context_limits = %v; want %v", s.Proxy.ContextLimits, want)
	}
	if _, err := st.SetSetting(ctx, "proxy.context_limits.claude-3.5-*", "100000"); err != nil {
		t.Errorf("SetSetting of an entry with dots in its name = %v", err)
	}
	if got, err := st.GetSetting(ctx, "proxy.context_limits.claude-3.5-*"); err != nil || got != "100000" {
		t.Errorf("GetSetting(proxy.context_limits.claude-3.5-*) = %q, %v; want 100000", got, err)
	}
	if _, err := st.GetSetting(ctx, "proxy.context_limits.gpt-*"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSetting of a missing entry = %v; want ErrNotFound", err)
	}
	if _, err := st.SetSetting(ctx, "proxy.context_limits.claude-*", "300000"); err != nil {
		t.Fatal(err)
	}

	// Resetting entries restores defaults entry by entry; the row goes once nothing differs.
	for _, key := range []string{"proxy.context_limits.claude-opus-4*", "proxy.context_limits.claude-3.5-*", "proxy.context_limits.claude-*"} {
		if err := st.ResetSetting(ctx, key); err != nil {
			t.Fatalf("ResetSetting(%q) = %v", key, err)
		}
	}
	got, err := st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if def := DefaultSettings().Proxy.ContextLimits; !reflect.DeepEqual(got.Proxy.ContextLimits, def) {
		t.Errorf("context_limits after resetting entries = %v; want defaults %v", got.Proxy.ContextLimits, def)
	}
	if n := countRows(t, st, "settings"); n != 0 {
		t.Errorf("settings rows after resetting every entry = %d; want 0", n)
	}
}

func TestUnknownKey(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	tests := []struct{ key, suggest string }{
		{"proxy.prot", "proxy.port"},
		{"max_attempts", "proxy.rotation.max_attempts"},
		{"proxy.port.x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			_, err := st.SetSetting(ctx, tt.key, "1")
			if !errors.Is(err, ErrUnknownSetting) || !strings.Contains(err.Error(), tt.key) {
				t.Fatalf("SetSetting(%q, 1) = %v; want ErrUnknownSetting naming the key", tt.key, err)
			}
			if tt.suggest != "" && !strings.Contains(err.Error(), tt.suggest) {
				t.Errorf("SetSetting(%q, 1) = %v; want it to suggest %q", tt.key, err, tt.suggest)
			}
			if _, err := st.GetSetting(ctx, tt.key); !errors.Is(err, ErrUnknownSetting) {
				t.Errorf("GetSetting(%q) = %v; want ErrUnknownSetting", tt.key, err)
			}
		})
	}
}

func TestSaveSettingsWritesOnlyChanges(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)

	if err := st.SaveSettings(ctx, DefaultSettings()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, "settings"); n != 0 {
		t.Errorf("rows after saving the defaults = %d; want 0 (defaults are not pinned)", n)
	}

	s := DefaultSettings()
	s.Proxy.Port = 9200
	s.Proxy.ModelMap = nil // the UI may send null for an empty list: same as empty
	if err := st.SaveSettings(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, st, "settings"); n != 1 {
		t.Errorf("rows after changing one key = %d; want 1", n)
	}

	s.Proxy.Experimental.ContextCompressionThresholdL1 = 0.9 // above L2
	s.History.RetentionDays = 30
	err := st.SaveSettings(ctx, s)
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "proxy.experimental.context_compression_threshold_l2" {
		t.Errorf("SaveSettings(L1 above L2) = %v; want ValidationError for threshold_l2", err)
	}
	if n := countRows(t, st, "settings"); n != 1 {
		t.Errorf("rows after a rejected save = %d; want 1 (nothing written)", n)
	}
}

func TestCorruptRowsAreSkipped(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t)
	const x = "proxy.experimental."
	rows := [][2]string{
		{"proxy.port", `not json`},                                // unreadable
		{"proxy.no_such_key", `1`},                                // unknown key
		{"proxy.bind", `"0.0.0.0"`},                               // fine
		{"history.retention_days", `0`},                           // invalid by itself
		{x + "context_compression_threshold_l1", `0.9`},           // invalid against the default L2
		{"compaction.keep_tool_rounds", `"five"`},                 // wrong type
		{"proxy.context_limits", `{"claude-*": -1, "gpt-*": 10}`}, // invalid entry
		{x + "context_compression_threshold_l2", `0.6`},           // valid only with L3 below,
		{x + "context_compression_threshold_l3", `0.65`},          // so both must stay
	}
	for _, r := range rows {
		if _, err := st.db.Exec(`INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)`,
			r[0], r[1], formatTime(testNow)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	reopened, logs := openAt(t, path)
	got, err := reopened.Settings(ctx)
	if err != nil {
		t.Fatalf("Settings() with corrupt rows = %v; want them skipped", err)
	}
	want := DefaultSettings()
	want.Proxy.Bind = "0.0.0.0"
	want.Proxy.Experimental.ContextCompressionThresholdL2 = 0.6
	want.Proxy.Experimental.ContextCompressionThresholdL3 = 0.65
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Settings() = %+v; want %+v", got, want)
	}
	for _, key := range []string{"proxy.port", "proxy.no_such_key", "history.retention_days",
		x + "context_compression_threshold_l1", "compaction.keep_tool_rounds", "proxy.context_limits"} {
		if !strings.Contains(logs.String(), "key="+key+" ") {
			t.Errorf("no warning naming %s in log:\n%s", key, logs)
		}
	}
	for _, key := range []string{"proxy.bind", x + "context_compression_threshold_l2", x + "context_compression_threshold_l3"} {
		if strings.Contains(logs.String(), "key="+key+" ") {
			t.Errorf("warning about usable row %s in log:\n%s", key, logs)
		}
	}

	// Setting a key again replaces its corrupt row; the rest of the app keeps working.
	if _, err := reopened.SetSetting(ctx, "proxy.port", "9300"); err != nil {
		t.Errorf("SetSetting(proxy.port) over a corrupt row = %v", err)
	}
	if got, err := reopened.GetSetting(ctx, "proxy.port"); err != nil || got != "9300" {
		t.Errorf("GetSetting(proxy.port) = %q, %v; want 9300", got, err)
	}
}

func TestValidationFieldsAreSettingKeys(t *testing.T) {
	breakers := map[string]func(*Settings){
		"port":    func(s *Settings) { s.Proxy.Port = -1 },
		"bind":    func(s *Settings) { s.Proxy.Bind = "" },
		"body":    func(s *Settings) { s.Proxy.MaxBodyBytes = 2 << 30 },
		"budget":  func(s *Settings) { s.Proxy.MemoryBudgetBytes = 1 },
		"limit":   func(s *Settings) { s.Proxy.DefaultContextLimit = 0 },
		"rounds":  func(s *Settings) { s.Compaction.KeepToolRounds = 0 },
		"protect": func(s *Settings) { s.Compaction.ProtectLastMessages = 0 },
		"chars":   func(s *Settings) { s.Compaction.MaxToolResultChars = 999 },
		"summary": func(s *Settings) { s.Compaction.SummaryModel = "" },
		"bytes":   func(s *Settings) { s.History.MaxBytes = 1 },
		"entry":   func(s *Settings) { s.Proxy.ContextLimits["x"] = 0 },
		"price":   func(s *Settings) { s.Pricing.Table["x"] = ModelPrice{Input: -1} },
		"tools":   func(s *Settings) { s.Monitor.ToolWarningCount = 0 },
	}
	for name, breakIt := range breakers {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			breakIt(&s)
			var ve *ValidationError
			if err := s.Validate(); !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v; want a ValidationError", err)
			}
			if _, _, err := lookupSetting(ve.Field); err != nil {
				t.Errorf("ValidationError.Field %q is not a setting key: %v", ve.Field, err)
			}
		})
	}
}

func TestConcurrentWritersFromTwoStores(t *testing.T) {
	// The app and the CLI write the same file; read-then-write transactions must wait for each
	// other (BEGIN IMMEDIATE + busy_timeout) rather than fail with SQLITE_BUSY.
	ctx := context.Background()
	app, path := openTemp(t)
	cli, _ := openAt(t, path)
	errs := make(chan error, 40)
	for i := range 20 {
		go func() {
			_, err := app.SetSetting(ctx, "proxy.context_limits.app-"+strconv.Itoa(i), "1000")
			errs <- err
		}()
		go func() {
			_, err := cli.SetSetting(ctx, "proxy.context_limits.cli-"+strconv.Itoa(i), "1000")
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent SetSetting = %v", err)
		}
	}
	s, err := app.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Proxy.ContextLimits); n != 42 {
		t.Errorf("context_limits has %d entries after 40 concurrent entry sets; want 42 (no lost update)", n)
	}
}

func TestToolWarningCount(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	if v, err := st.GetSetting(ctx, "monitor.tool_warning_count"); err != nil || v != "30" {
		t.Errorf("default monitor.tool_warning_count = %q, %v; want 30", v, err)
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"1", true}, {"64", true}, {"0", false}, {"-3", false}, {"2.5", false}, {"many", false}} {
		_, err := st.SetSetting(ctx, "monitor.tool_warning_count", tc.value)
		var ve *ValidationError
		if tc.ok && err != nil || !tc.ok && (!errors.As(err, &ve) || ve.Field != "monitor.tool_warning_count") {
			t.Errorf("SetSetting(monitor.tool_warning_count, %q) = %v; want accepted %t", tc.value, err, tc.ok)
		}
	}
	if s, err := st.Settings(ctx); err != nil || s.Monitor.ToolWarningCount != 64 {
		t.Errorf("Settings().Monitor.ToolWarningCount = %d, %v; want 64 (the last valid value)", s.Monitor.ToolWarningCount, err)
	}
}

func TestPriceTableEntries(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	if got, err := st.GetSetting(ctx, "pricing.table.claude-sonnet-4*"); err != nil ||
		got != `{"input":3,"output":15,"cache_read":0.3,"cache_write":3.75,"cache_write_1h":6}` {
		t.Errorf("default pricing.table.claude-sonnet-4* = %q, %v; want the list price", got, err)
	}
	// An entry without cache prices keeps them out (they follow the input price), rather than
	// making cache reads free.
	s, err := st.SetSetting(ctx, "pricing.table.my-model*", `{"input":2,"output":6}`)
	if err != nil {
		t.Fatalf("SetSetting(pricing.table.my-model*) = %v", err)
	}
	if got := s.Pricing.Table["my-model*"]; got.Input != 2 || got.Output != 6 || got.CacheRead != nil || got.CacheWrite != nil || got.CacheWrite1h != nil {
		t.Errorf("pricing.table.my-model* = %+v; want input 2, output 6, no cache prices", got)
	}
	if got, err := st.GetSetting(ctx, "pricing.table.my-model*"); err != nil || got != `{"input":2,"output":6}` {
		t.Errorf("GetSetting(pricing.table.my-model*) = %q, %v", got, err)
	}
	if _, err := st.SetSetting(ctx, "pricing.table.claude-opus-4*", `{"input":4,"output":20,"cache_read":0.2}`); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"pricing.table.my-model*", "pricing.table.claude-opus-4*"} {
		if err := st.ResetSetting(ctx, key); err != nil {
			t.Fatalf("ResetSetting(%q) = %v", key, err)
		}
	}
	got, err := st.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Pricing.Table, DefaultPrices()) {
		t.Errorf("pricing.table after resetting its entries = %v; want the defaults", got.Pricing.Table)
	}
	if n := countRows(t, st, "settings"); n != 0 {
		t.Errorf("settings rows after resetting every entry = %d; want 0", n)
	}
}

// A client key stored before keys had to be 16 characters stays in force (dropping it would
// open the proxy to every local process); only new keys must be long.
func TestAShortClientKeyStoredEarlierStaysInForce(t *testing.T) {
	ctx := context.Background()
	st, _ := openTemp(t)
	if _, err := st.db.Exec(`INSERT INTO settings (key, value, updated_at) VALUES ('proxy.client_key', '"old-short-key"', ?)`, time.Now()); err != nil {
		t.Fatal(err)
	}
	s, err := st.Settings(ctx)
	if err != nil || s.Proxy.ClientKey != "old-short-key" {
		t.Fatalf("client key loaded = %q, %v; want the stored short key kept", s.Proxy.ClientKey, err)
	}
	if _, err := st.SetSetting(ctx, "proxy.client_key", "still-short"); err == nil {
		t.Error("a new short key was accepted")
	}
	if _, err := st.SetSetting(ctx, "proxy.client_key", ""); err != nil {
		t.Errorf("turning the key off: %v", err)
	}
}
