package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// oauthClients returns what the proxy wraps the transport of each server
// with [mcp.servers.NAME.auth] in: its OAuth client, on the user's token
// store. With bearer tokens a person's login would be every owner's, so
// only client_credentials (a service acting for itself) is accepted
// there until each owner can log in for themselves.
func oauthClients(cfg *config.Config, log *slog.Logger) (func(owner string, sc config.Server) func(http.RoundTripper) http.RoundTripper, error) {
	some := false
	for _, sc := range cfg.Servers {
		if sc.Auth == nil {
			continue
		}
		some = true
		if len(cfg.HTTP.Tokens) > 0 && sc.Auth.Grant != config.GrantClientCredentials {
			return nil, fmt.Errorf("mcp.servers.%s.auth: grant %q with bearer tokens ([http]): every owner would call %s as the one person logged in; per-owner logins are not supported yet: use grant = %q (a service identity) or serve without bearer tokens",
				sc.Name, sc.Auth.Grant, sc.Name, config.GrantClientCredentials)
		}
	}
	if !some {
		return nil, nil
	}
	store, err := authStore()
	if err != nil {
		return nil, err
	}
	return func(owner string, sc config.Server) func(http.RoundTripper) http.RoundTripper {
		if sc.Auth == nil {
			return nil
		}
		c := newOAuthClient(cfg, sc, store, log)
		if owner != "" {
			c = oauth.New(oauth.Options{Server: sc, Store: store, Owner: owner, Logger: log, LoginCommand: loginCommand(cfg, sc.Name)})
		}
		return c.Wrap
	}, nil
}

// authStore is the user's token store ($SCRATCHPAD_MCP_AUTH_DIR, else in
// the user's configuration directory).
func authStore() (*oauth.Store, error) {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return nil, err
	}
	return &oauth.Store{Dir: dir}, nil
}

func newOAuthClient(cfg *config.Config, sc config.Server, store *oauth.Store, log *slog.Logger) *oauth.Client {
	return oauth.New(oauth.Options{Server: sc, Store: store, Logger: log, LoginCommand: loginCommand(cfg, sc.Name)})
}

// loginCommand is the command that logs in to server, with the config
// the running process was given (a different one would be another
// server set).
func loginCommand(cfg *config.Config, server string) string {
	c := "scratchpad-mcp auth login"
	if cfg.Path != "" {
		c += " --config " + shellQuote(cfg.Path)
	}
	return c + " " + shellQuote(server)
}
