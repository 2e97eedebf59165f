package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"longhaul/store"
	"longhaul/store/keychain"
	"longhaul/store/keychain/keychaintest"
)

const cliClientKey = "local-client-key-from-stdin-0123-wxyz"

// runAll runs every command in turn; the CLI's buffers collect what they print.
func runAll(t *testing.T, c *CLI, cmds ...[]string) {
	t.Helper()
	for _, args := range cmds {
		if err := c.Run(context.Background(), args); err != nil {
			t.Fatalf("longhaul %v = %v", args, err)
		}
	}
}

func TestCLIClientKeyFromStdinIsMaskedEverywhere(t *testing.T) {
	c, out, errOut := newCLI(t)
	c.Stdin = strings.NewReader(cliClientKey + "\n")
	runAll(t, c,
		[]string{"settings", "set", "proxy.client_key", "-"},
		[]string{"settings", "get", "proxy.client_key"},
		[]string{"settings", "get"},
	)
	if printed := out.String() + errOut.String(); strings.Contains(printed, "from-stdin") {
		t.Errorf("CLI output shows the client key: %q", printed)
	}
	if want := store.MaskSecret(cliClientKey); !strings.Contains(out.String(), "proxy.client_key = "+want) {
		t.Errorf("settings get = %q; want the masked key %q", out.String(), want)
	}
	// The key itself was stored, not "-".
	st, err := c.Open(context.Background(), c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close() //nolint:errcheck // test
	s, err := st.Settings(context.Background())
	if err != nil || s.Proxy.ClientKey != cliClientKey {
		t.Errorf("stored client key = %q, %v; want the line read from stdin", store.MaskSecret(s.Proxy.ClientKey), err)
	}
}

// A short client key is refused with the way to a good one; --generate makes one, prints it
// once, stores it, and `settings get` shows it masked.
func TestCLIClientKeyMustBeLongOrGenerated(t *testing.T) {
	c, out, _ := newCLI(t)
	err := c.Run(context.Background(), []string{"settings", "set", "proxy.client_key", "abc"})
	if err == nil || !strings.Contains(err.Error(), "at least 16 characters") || !strings.Contains(err.Error(), "--generate") {
		t.Fatalf("a 3-character key: %v; want it refused, naming 16 characters and --generate", err)
	}
	if err := c.Run(context.Background(), []string{"settings", "set", "proxy.client_key", "fifteen-chars15"}); err == nil {
		t.Fatal("a 15-character key was accepted")
	}
	runAll(t, c, []string{"settings", "set", "proxy.client_key", "--generate"})
	printed, ok := strings.CutPrefix(strings.TrimSpace(out.String()), "proxy.client_key = ")
	if !ok || len(printed) < 40 || !strings.HasPrefix(printed, "lh-") {
		t.Fatalf("--generate printed %q; want proxy.client_key = lh-… (the whole new key)", out.String())
	}
	st, err := c.Open(context.Background(), c.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Settings(context.Background())
	st.Close() //nolint:errcheck // read only
	if err != nil || s.Proxy.ClientKey != printed {
		t.Fatalf("stored key %q, %v; want the printed one", store.MaskSecret(s.Proxy.ClientKey), err)
	}
	out.Reset()
	runAll(t, c, []string{"settings", "get", "proxy.client_key"})
	if strings.Contains(out.String(), printed) {
		t.Errorf("settings get shows the generated key whole: %q", out.String())
	}
	out.Reset()
	runAll(t, c, []string{"settings", "set", "proxy.client_key", "--generate"})
	if again := strings.TrimPrefix(strings.TrimSpace(out.String()), "proxy.client_key = "); again == printed {
		t.Error("--generate made the same key twice")
	}
}

func TestCLIAccountListSaysWhereSecretsAre(t *testing.T) {
	for _, tc := range []struct {
		name     string
		bus      func(testing.TB)
		column   string
		wantNote bool
	}{
		{"keychain", keychaintest.SecretService, "OS keychain", false},
		{"no keychain", keychaintest.NoSecretService, "database file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.bus(t)
			c, out, errOut := newCLI(t)
			c.Open = func(ctx context.Context, dir string) (*store.Store, error) {
				return store.Open(ctx, filepath.Join(dir, "longhaul.db"), store.WithKeychain(keychain.OS{Service: "longhaul-test"}))
			}
			c.Stdin = strings.NewReader("sk-ant-api03-cli-keychain-secret-9876\n")
			runAll(t, c,
				[]string{"account", "add", "--key", "-"},
				[]string{"account", "list"},
			)
			if !strings.Contains(out.String(), "KEY STORED IN") || !strings.Contains(out.String(), tc.column) {
				t.Errorf("account list = %q; want the column saying %q", out.String(), tc.column)
			}
			note := strings.Contains(errOut.String(), "secrets are kept in the database file")
			if note != tc.wantNote {
				t.Errorf("account list stderr = %q; want a database note: %v", errOut.String(), tc.wantNote)
			}
			if strings.Contains(out.String()+errOut.String(), "cli-keychain-secret") {
				t.Errorf("CLI output shows the key: %q", out.String())
			}
			db, err := os.ReadFile(filepath.Join(c.DataDir, "longhaul.db"))
			if err != nil {
				t.Fatal(err)
			}
			wal, _ := os.ReadFile(filepath.Join(c.DataDir, "longhaul.db-wal")) //nolint:errcheck // may not exist
			inFile := strings.Contains(string(db)+string(wal), "cli-keychain-secret")
			if inFile != tc.wantNote {
				t.Errorf("secret in the database file: %v; want %v (kept in the %s)", inFile, tc.wantNote, tc.column)
			}
		})
	}
}
