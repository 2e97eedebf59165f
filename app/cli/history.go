package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"longhaul/store"
)

// historyExport is `longhaul history export`: JSON Lines on stdout, oldest first, bodies
// decompressed (and redacted, as they were stored).
func (c *CLI) historyExport(fs *flag.FlagSet) action {
	since := fs.String("since", "", "only exchanges that started at or after this RFC 3339 time")
	session := fs.String("session", "", "only this session")
	return func(ctx context.Context, st *store.Store, _ []string) error {
		f := store.HistoryFilter{Session: *session}
		if *since != "" {
			t, err := time.Parse(time.RFC3339Nano, *since)
			if err != nil {
				return fmt.Errorf("--since %q is not an RFC 3339 time (like 2026-01-02T15:04:05Z)", *since)
			}
			f.Since = t
		}
		n, err := st.ExportExchanges(ctx, f, c.Stdout)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stderr, "exported %d exchanges\n", n)
		return nil
	}
}
