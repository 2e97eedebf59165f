package app

import (
	"strings"

	"longhaul/app/clients"
)

// Clients points coding agents at this proxy (app/clients edits their configuration).
type Clients struct{ bound }

// ClaudeCodeStatus reports whether Claude Code's settings point at this proxy.
func (c *Clients) ClaudeCodeStatus() (clients.ClaudeCodeConfig, error) {
	return clients.ClaudeCode{}.Status(c.app.clientBaseURL())
}

// ConfigureClaudeCode writes the env block into ~/.claude/settings.json (with a backup).
func (c *Clients) ConfigureClaudeCode() (clients.ClaudeCodeConfig, error) {
	token, err := c.clientToken()
	if err != nil {
		return clients.ClaudeCodeConfig{}, err
	}
	return clients.ClaudeCode{}.Configure(c.app.clientBaseURL(), token)
}

// UndoClaudeCode restores ~/.claude/settings.json from the newest backup.
func (c *Clients) UndoClaudeCode() (clients.ClaudeCodeConfig, error) {
	return clients.ClaudeCode{}.Undo(c.app.clientBaseURL())
}

// clientToken is what clients send as their key: the client key when one is set, else any
// value will do.
func (c *Clients) clientToken() (string, error) {
	s, err := c.app.store.Settings(c.ctx())
	if err != nil {
		return "", err
	}
	if s.Proxy.ClientKey != "" {
		return s.Proxy.ClientKey, nil
	}
	return "longhaul", nil
}

// clientBaseURL is the address clients use: the proxy's, with a wildcard bind replaced by
// the loopback address.
func (a *App) clientBaseURL() string {
	u := a.Status().BaseURL
	for _, wild := range []string{"0.0.0.0", "[::]"} {
		u = strings.Replace(u, "//"+wild+":", "//127.0.0.1:", 1)
	}
	return u
}
