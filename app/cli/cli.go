// Package cli is Longhaul's scripting interface: `longhaul account|settings|history …` edit and
// read a data dir's store directly. A running instance on the same data dir notices the change
// (store.Watch) and applies it. `longhaul replay` re-sends a repro bundle (app/bundle).
package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"longhaul/store"
)

// CLI runs the subcommands against a data dir.
type CLI struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// DataDir is the default data dir; subcommands accept --data-dir too.
	DataDir string
	// Open opens the store of a data dir.
	Open func(ctx context.Context, dataDir string) (*store.Store, error)
	// Version, GOOS and GOARCH describe this build in a repro bundle (runtime.GOOS, GOARCH).
	Version, GOOS, GOARCH string
	// Transport sends `replay`'s request. Nil: http.DefaultTransport (no overall timeout: a
	// stream lasts as long as it lasts; the context cancels it). A RoundTripper, never an
	// http.Client: it follows no redirect, so --key goes to --base-url only.
	Transport http.RoundTripper
}

// ErrUsage marks a command line that could not be understood; the usage has
// been printed.
var ErrUsage = errors.New("usage")

const usage = `usage:
  longhaul account add [--kind anthropic|openai|openai-responses|gemini] [--base-url URL] --key KEY|- [--label L]
                       [--models 'claude-*,gpt-4o']
      (--base-url defaults to the kind's official endpoint; for openai kinds it is what the
      OpenAI SDK takes, e.g. http://localhost:11434/v1 for Ollama; --models limits the account
      to those model names or * patterns, default any model)
  longhaul account list
  longhaul account rm ID
  longhaul account enable ID | account disable ID
  longhaul settings get [KEY]
  longhaul settings set KEY VALUE|-   (- reads the value from stdin, e.g. proxy.client_key)
  longhaul settings set proxy.client_key --generate
      (a new random client key, printed once: give it to your clients as their API key)
  longhaul settings reset KEY
  longhaul history export [--since RFC3339] [--session ID]   (JSON Lines to stdout)
  longhaul history bundle ID > bundle.zip
      (the request's repro bundle for a bug report: bodies, reply, attempts, compaction steps,
      settings, version; the client key, account keys and key-shaped strings masked)
  longhaul replay BUNDLE.zip --base-url URL [--key KEY|-]
      (re-sends the bundle's request as received to the same route under URL, a Longhaul or a
      scripted upstream, and prints the status and the reply; sends no key unless --key;
      never follows a redirect: it prints it and fails)
Every subcommand but replay accepts --data-dir DIR.`

// IsCommand reports whether args start with a CLI subcommand.
func IsCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "account" || args[0] == "settings" || args[0] == "history" || args[0] == "replay")
}

// action runs a parsed command: rest are its positional arguments.
type action func(ctx context.Context, st *store.Store, rest []string) error

// commands declare their flags on fs and return what runs once they are parsed.
var commands = map[string]func(c *CLI, fs *flag.FlagSet) action{
	"account add":     (*CLI).accountAdd,
	"account list":    func(c *CLI, _ *flag.FlagSet) action { return c.accountList },
	"account rm":      func(c *CLI, _ *flag.FlagSet) action { return c.accountChange("rm") },
	"account enable":  func(c *CLI, _ *flag.FlagSet) action { return c.accountChange("enable") },
	"account disable": func(c *CLI, _ *flag.FlagSet) action { return c.accountChange("disable") },
	"settings get":    func(c *CLI, _ *flag.FlagSet) action { return c.settingsGet },
	"settings set":    (*CLI).settingsSet,
	"settings reset":  func(c *CLI, _ *flag.FlagSet) action { return c.settingsReset },
	"history export":  (*CLI).historyExport,
	"history bundle":  (*CLI).historyBundle,
	"replay":          (*CLI).replay,
}

// withoutStore are the commands that never open a data dir's store.
var withoutStore = map[string]bool{"replay": true}

// Run executes one subcommand.
func (c *CLI) Run(ctx context.Context, args []string) error {
	name, args, ok := commandName(args)
	if !ok {
		return c.usage()
	}
	declare := commands[name]
	fs := flag.NewFlagSet("longhaul "+name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	var dataDir *string
	if !withoutStore[name] {
		dataDir = fs.String("data-dir", c.DataDir, "data directory")
	}
	run := declare(c, fs)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return ErrUsage
	}
	if dataDir == nil {
		return run(ctx, nil, rest)
	}
	st, err := c.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close() //nolint:errcheck // read-mostly; writes committed already
	return run(ctx, st, rest)
}

// commandName finds the command args start with (one word or two) and returns the rest.
func commandName(args []string) (string, []string, bool) {
	if len(args) > 0 && commands[args[0]] != nil {
		return args[0], args[1:], true
	}
	if len(args) > 1 && commands[args[0]+" "+args[1]] != nil {
		return args[0] + " " + args[1], args[2:], true
	}
	return "", nil, false
}

func (c *CLI) accountAdd(fs *flag.FlagSet) action {
	baseURL := fs.String("base-url", "", "upstream base URL (default: the kind's official endpoint)")
	key := fs.String("key", "", "API key, or - to read it from stdin (keeps it out of shell history)")
	label := fs.String("label", "", "a name to tell accounts apart")
	kind := fs.String("kind", store.KindAnthropic, "the protocol the upstream speaks: "+strings.Join(store.Kinds(), ", "))
	models := fs.String("models", "", "comma-separated model names or * patterns the account serves (default: any model)")
	return func(ctx context.Context, st *store.Store, _ []string) error {
		// Checked before the key is read: a typo should not cost a pasted key.
		if !slices.Contains(store.Kinds(), *kind) {
			return fmt.Errorf("--kind %q: must be one of %s", *kind, strings.Join(store.Kinds(), ", "))
		}
		secret := *key
		if secret == "-" {
			var err error
			if secret, err = c.readLine("key"); err != nil {
				return err
			}
		}
		if secret == "" {
			return errors.New("--key is required")
		}
		a, err := st.AddAccount(ctx, store.Account{Label: *label, Kind: *kind, BaseURL: *baseURL, Secret: secret, Enabled: true, Weight: 1,
			Models: modelList(*models)})
		if err != nil {
			return err
		}
		served := ""
		if len(a.Models) > 0 {
			served = ", models " + strings.Join(a.Models, ",")
		}
		fmt.Fprintf(c.Stdout, "added account %d (%s, %s, %s%s)\n", a.ID, a.Kind, a.BaseURL, a.MaskedSecret(), served)
		return nil
	}
}

// modelList splits --models: comma-separated, blanks dropped.
func modelList(flag string) []string {
	var out []string
	for m := range strings.SplitSeq(flag, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func (c *CLI) accountList(ctx context.Context, st *store.Store, _ []string) error {
	accounts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tKIND\tBASE URL\tKEY\tKEY STORED IN\tSTATUS")
	for _, a := range accounts {
		status := "enabled"
		if !a.Enabled {
			status = "disabled"
			if a.DisabledReason != "" {
				status += ": " + a.DisabledReason
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Label, a.Kind, a.BaseURL, a.MaskedSecret(), storedIn(a.SecretStorage), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.SecretStorage() == store.SecretsInDatabase {
		fmt.Fprintln(c.Stderr, "note: no OS keychain answered; secrets are kept in the database file (mode 0600)")
	}
	return nil
}

// storedIn names where a secret is kept, plainly.
func storedIn(storage string) string {
	if storage == store.SecretsInKeychain {
		return "OS keychain"
	}
	return "database file"
}

// readLine reads one line (what) from stdin: secrets given as "-" stay out of the shell's
// history and the process list.
func (c *CLI) readLine(what string) (string, error) {
	line, err := bufio.NewReader(c.Stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("read %s from stdin: %w", what, err)
	}
	return strings.TrimSpace(line), nil
}

// shown is a setting's value as the CLI prints it: secrets masked.
func shown(key, value string) string {
	if key == "proxy.client_key" {
		return store.MaskSecret(value)
	}
	return value
}

// accountChange is `account rm|enable|disable ID`.
func (c *CLI) accountChange(verb string) action {
	return func(ctx context.Context, st *store.Store, rest []string) error {
		if len(rest) != 1 {
			return c.usage()
		}
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil {
			return fmt.Errorf("account id %q is not a number", rest[0])
		}
		switch verb {
		case "rm":
			err = st.DeleteAccount(ctx, id)
		case "enable":
			err = st.SetAccountEnabled(ctx, id, true, "")
		default:
			err = st.SetAccountEnabled(ctx, id, false, "disabled by the user")
		}
		if err != nil {
			return fmt.Errorf("%s account %d: %w", verb, id, err)
		}
		done := map[string]string{"rm": "removed", "enable": "enabled", "disable": "disabled"}[verb]
		fmt.Fprintf(c.Stdout, "%s account %d\n", done, id)
		return nil
	}
}

func (c *CLI) settingsGet(ctx context.Context, st *store.Store, rest []string) error {
	keys := rest
	if len(keys) == 0 {
		keys = store.SettingKeys()
	}
	for _, k := range keys {
		v, err := st.GetSetting(ctx, k)
		if err != nil {
			return err
		}
		if len(rest) == 1 {
			fmt.Fprintln(c.Stdout, shown(k, v))
		} else {
			fmt.Fprintf(c.Stdout, "%s = %s\n", k, shown(k, v))
		}
	}
	return nil
}

// settingsSet is `settings set KEY VALUE|-`, and `settings set proxy.client_key --generate`.
func (c *CLI) settingsSet(fs *flag.FlagSet) action {
	generate := fs.Bool("generate", false, "set proxy.client_key to a new random key and print it once")
	return func(ctx context.Context, st *store.Store, rest []string) error {
		if *generate {
			if len(rest) != 1 || rest[0] != "proxy.client_key" {
				return fmt.Errorf("--generate makes a client key: longhaul settings set proxy.client_key --generate")
			}
			key := store.GenerateClientKey()
			if _, err := st.SetSetting(ctx, rest[0], key); err != nil {
				return err
			}
			// The one time the key is shown whole: the user asked for it, to give it to clients.
			fmt.Fprintf(c.Stdout, "proxy.client_key = %s\n", key)
			fmt.Fprintln(c.Stderr, "shown once: clients send it as x-api-key, Authorization: Bearer or x-goog-api-key; `settings get` shows it masked")
			return nil
		}
		if len(rest) != 2 {
			return c.usage()
		}
		value := rest[1]
		if value == "-" {
			var err error
			if value, err = c.readLine("value"); err != nil {
				return err
			}
		}
		if _, err := st.SetSetting(ctx, rest[0], value); err != nil {
			return err
		}
		v, err := st.GetSetting(ctx, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "%s = %s\n", rest[0], shown(rest[0], v))
		return nil
	}
}

func (c *CLI) settingsReset(ctx context.Context, st *store.Store, rest []string) error {
	if len(rest) != 1 {
		return c.usage()
	}
	return st.ResetSetting(ctx, rest[0])
}

// parseInterspersed accepts flags before, between and after positional
// arguments (`settings set KEY VALUE --data-dir D`), which flag.Parse does not.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

func (c *CLI) usage() error {
	fmt.Fprintln(c.Stderr, usage)
	return ErrUsage
}
