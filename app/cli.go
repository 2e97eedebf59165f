package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"longhaul/store"
)

// CLI runs the scripting subcommands against a data dir. A running instance
// on the same data dir notices the change (store.Watch) and applies it.
type CLI struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// DataDir is the default data dir; subcommands accept --data-dir too.
	DataDir string
	// Open opens the store of a data dir.
	Open func(ctx context.Context, dataDir string) (*store.Store, error)
}

// ErrUsage marks a command line that could not be understood; the usage has
// been printed.
var ErrUsage = errors.New("usage")

const cliUsage = `usage:
  longhaul account add --base-url URL --key KEY|- [--label L] [--kind anthropic]
  longhaul account list
  longhaul account rm ID
  longhaul account enable ID | account disable ID
  longhaul settings get [KEY]
  longhaul settings set KEY VALUE
  longhaul settings reset KEY
  longhaul history export [--since RFC3339] [--session ID]   (JSON Lines to stdout)
Every subcommand accepts --data-dir DIR.`

// IsCommand reports whether args start with a CLI subcommand.
func IsCommand(args []string) bool {
	return len(args) > 0 && (args[0] == "account" || args[0] == "settings" || args[0] == "history")
}

// Run executes one subcommand.
func (c *CLI) Run(ctx context.Context, args []string) error {
	if len(args) < 2 {
		fmt.Fprintln(c.Stderr, cliUsage)
		return ErrUsage
	}
	fs := flag.NewFlagSet("longhaul "+args[0]+" "+args[1], flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	dataDir := fs.String("data-dir", c.DataDir, "data directory")
	var baseURL, key, label, kind string
	if args[0] == "account" && args[1] == "add" {
		fs.StringVar(&baseURL, "base-url", "https://api.anthropic.com", "upstream base URL")
		fs.StringVar(&key, "key", "", "API key, or - to read it from stdin (keeps it out of shell history)")
		fs.StringVar(&label, "label", "", "a name to tell accounts apart")
		fs.StringVar(&kind, "kind", store.KindAnthropic, "provider kind")
	}
	var since, session string
	if args[0] == "history" && args[1] == "export" {
		fs.StringVar(&since, "since", "", "only exchanges that started at or after this RFC 3339 time")
		fs.StringVar(&session, "session", "", "only this session")
	}
	rest, err := parseInterspersed(fs, args[2:])
	if err != nil {
		return ErrUsage
	}
	st, err := c.Open(ctx, *dataDir)
	if err != nil {
		return err
	}
	defer st.Close() //nolint:errcheck // read-mostly; writes committed already
	switch args[0] + " " + args[1] {
	case "account add":
		if key == "-" {
			line, err := bufio.NewReader(c.Stdin).ReadString('\n')
			if err != nil && line == "" {
				return fmt.Errorf("read key from stdin: %w", err)
			}
			key = strings.TrimSpace(line)
		}
		if key == "" {
			return errors.New("--key is required")
		}
		a, err := st.AddAccount(ctx, store.Account{Label: label, Kind: kind, BaseURL: baseURL, Secret: key, Enabled: true, Weight: 1})
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "added account %d (%s, %s)\n", a.ID, a.BaseURL, a.MaskedSecret())
	case "account list":
		accounts, err := st.Accounts(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tLABEL\tKIND\tBASE URL\tKEY\tSTATUS")
		for _, a := range accounts {
			status := "enabled"
			if !a.Enabled {
				status = "disabled"
				if a.DisabledReason != "" {
					status += ": " + a.DisabledReason
				}
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Label, a.Kind, a.BaseURL, a.MaskedSecret(), status)
		}
		return tw.Flush()
	case "account rm", "account enable", "account disable":
		if len(rest) != 1 {
			return c.usage()
		}
		id, err := strconv.ParseInt(rest[0], 10, 64)
		if err != nil {
			return fmt.Errorf("account id %q is not a number", rest[0])
		}
		switch args[1] {
		case "rm":
			err = st.DeleteAccount(ctx, id)
		case "enable":
			err = st.SetAccountEnabled(ctx, id, true, "")
		default:
			err = st.SetAccountEnabled(ctx, id, false, "disabled by the user")
		}
		if err != nil {
			return fmt.Errorf("%s account %d: %w", args[1], id, err)
		}
		done := map[string]string{"rm": "removed", "enable": "enabled", "disable": "disabled"}[args[1]]
		fmt.Fprintf(c.Stdout, "%s account %d\n", done, id)
	case "settings get":
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
				fmt.Fprintln(c.Stdout, v)
			} else {
				fmt.Fprintf(c.Stdout, "%s = %s\n", k, v)
			}
		}
	case "settings set":
		if len(rest) != 2 {
			return c.usage()
		}
		if _, err := st.SetSetting(ctx, rest[0], rest[1]); err != nil {
			return err
		}
		v, err := st.GetSetting(ctx, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Stdout, "%s = %s\n", rest[0], v)
	case "history export":
		return c.exportHistory(ctx, st, since, session)
	case "settings reset":
		if len(rest) != 1 {
			return c.usage()
		}
		return st.ResetSetting(ctx, rest[0])
	default:
		return c.usage()
	}
	return nil
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
	fmt.Fprintln(c.Stderr, cliUsage)
	return ErrUsage
}
