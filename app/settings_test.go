package app

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"longhaul/proxy"
	"longhaul/store"
)

func TestSetSettingsAppliesAndReportsFields(t *testing.T) {
	a, _ := newTestApp(t)
	settings := a.Facades(context.Background).Settings
	const l1, l2 = "proxy.experimental.context_compression_threshold_l1", "proxy.experimental.context_compression_threshold_l2"

	_, err := settings.Set(map[string]any{l2: 0.3}) // below L1 (0.4)
	var fe FieldErrors
	if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != l2 {
		t.Fatalf("Set(L2=0.3) error = %#v; want FieldErrors on %s", err, l2)
	}
	if !strings.HasPrefix(err.Error(), l2+": ") {
		t.Errorf("error text %q; want it to start with the field (the window parses it)", err.Error())
	}

	v, err := settings.Set(map[string]any{l1: 0.5, l2: 0.6, "proxy.context_limits": map[string]any{"*": 3000}, "proxy.request_timeout": "90s"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Settings.Proxy.Experimental.ContextCompressionThresholdL2 != 0.6 || v.Settings.Proxy.ContextLimits["*"] != 3000 {
		t.Errorf("SettingsView after save = %+v", v.Settings.Proxy)
	}
	if got := a.proxy.Config().Compaction.ThresholdL2; got != 0.6 {
		t.Errorf("proxy ThresholdL2 = %v right after Set; want 0.6 (applied without waiting for the watch)", got)
	}
	if v.Overrides["proxy.port"] == "" {
		t.Errorf("Overrides = %v; want proxy.port (the test app runs with a port override)", v.Overrides)
	}

	v, err = settings.Reset([]string{l1, l2, "proxy.context_limits"})
	if err != nil {
		t.Fatal(err)
	}
	if def := store.DefaultSettings(); v.Settings.Proxy.Experimental != def.Proxy.Experimental {
		t.Errorf("after reset: %+v; want defaults", v.Settings.Proxy.Experimental)
	}
}

func TestSetSettingsPortRebindsWithoutRestart(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "longhaul.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	free := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	first, second := free(), free()
	if _, err := st.SetSetting(ctx, "proxy.port", itoa(first)); err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.New(proxy.Config{}, proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	a := New(Deps{Store: st, Proxy: srv})
	if err := a.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SetProxyEnabled(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Facades(context.Background).Settings.Set(map[string]any{"proxy.port": second}); err != nil {
		t.Fatal(err)
	}
	if st := a.Status(); !st.Running || !strings.HasSuffix(st.Address, ":"+itoa(second)) {
		t.Errorf("status after the port change = %+v; want running on :%d", st, second)
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+itoa(second))
	if err != nil {
		t.Fatalf("new port does not accept: %v", err)
	}
	conn.Close()
}

func itoa(n int) string { return strconv.Itoa(n) }
