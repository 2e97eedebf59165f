package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

func openAPITestStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSetSettingsValidatesTheWholeChange(t *testing.T) {
	st := openAPITestStore(t)
	ctx := context.Background()
	const l1, l2 = "proxy.experimental.context_compression_threshold_l1", "proxy.experimental.context_compression_threshold_l2"

	// Raising L1 above the default L2 alone is refused; with L2 in the same change it is not.
	_, err := st.SetSettings(ctx, map[string]string{l1: "0.6"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != l2 {
		t.Fatalf("SetSettings(L1=0.6) error = %v; want a ValidationError on %s", err, l2)
	}
	s, err := st.SetSettings(ctx, map[string]string{l1: "0.6", l2: "0.65", "proxy.context_limits.tiny-*": "3000"})
	if err != nil {
		t.Fatalf("SetSettings(L1=0.6, L2=0.65) = %v", err)
	}
	x := s.Proxy.Experimental
	if x.ContextCompressionThresholdL1 != 0.6 || x.ContextCompressionThresholdL2 != 0.65 || s.Proxy.ContextLimits["tiny-*"] != 3000 {
		t.Errorf("settings after SetSettings = %+v, limits %v", x, s.Proxy.ContextLimits)
	}
	if got, _ := st.GetSetting(ctx, l2); got != "0.65" {
		t.Errorf("stored L2 = %q; want 0.65", got)
	}
}

func TestSetSettingsReportsEveryUnreadableKey(t *testing.T) {
	st := openAPITestStore(t)
	_, err := st.SetSettings(context.Background(), map[string]string{
		"proxy.port": `"eighty"`, "proxy.rotation.max_attempts": "many", "no.such.key": "1", "proxy.bind": "::1",
	})
	fields := map[string]bool{}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ve *ValidationError
		if errors.As(e, &ve) {
			fields[ve.Field] = true
		}
	}
	for _, want := range []string{"proxy.port", "proxy.rotation.max_attempts", "no.such.key"} {
		if !fields[want] {
			t.Errorf("SetSettings error %v does not name %s", err, want)
		}
	}
	if got, _ := st.GetSetting(context.Background(), "proxy.bind"); got != "127.0.0.1" {
		t.Errorf("proxy.bind = %q after a refused change; want it untouched", got)
	}
}

func TestResetSettingsRefusesAnInvalidResult(t *testing.T) {
	st := openAPITestStore(t)
	ctx := context.Background()
	const l1, l2, l3 = "proxy.experimental.context_compression_threshold_l1", "proxy.experimental.context_compression_threshold_l2", "proxy.experimental.context_compression_threshold_l3"
	if _, err := st.SetSettings(ctx, map[string]string{l1: "0.8", l2: "0.85", l3: "0.9", "proxy.port": "9000"}); err != nil {
		t.Fatal(err)
	}
	var ve *ValidationError
	if _, err := st.ResetSettings(ctx, []string{l2}); !errors.As(err, &ve) {
		t.Fatalf("ResetSettings(L2) = %v; want a ValidationError (default 0.55 < L1 0.8)", err)
	}
	s, err := st.ResetSettings(ctx, []string{l1, l2, l3, "proxy.port"})
	if err != nil {
		t.Fatal(err)
	}
	if def := DefaultSettings(); s.Proxy.Port != def.Proxy.Port || s.Proxy.Experimental != def.Proxy.Experimental {
		t.Errorf("after ResetSettings: port %d, thresholds %+v; want defaults", s.Proxy.Port, s.Proxy.Experimental)
	}
}
