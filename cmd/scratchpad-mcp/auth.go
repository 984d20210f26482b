package main

import (
	"log/slog"
	"net"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// needsWebLogins reports whether some server's owners log in through the
// server: authorization_code servers not shared.
func needsWebLogins(cfg *config.Config) bool {
	for _, sc := range cfg.Servers {
		if sc.Auth != nil && sc.Auth.Grant == config.GrantAuthorizationCode && !sc.Shared {
			return true
		}
	}
	return false
}

// setRedirect tells web where the server is reached: [http] public_url,
// else http:// and the address it listens on.
func setRedirect(cfg *config.Config, web *oauth.WebLogins, ln net.Listener, log *slog.Logger) {
	base := strings.TrimSuffix(cfg.HTTP.PublicURL, "/")
	if base == "" {
		base = "http://" + ln.Addr().String()
		if host, _, _ := net.SplitHostPort(ln.Addr().String()); host == "0.0.0.0" || host == "::" {
			log.Warn("owners' OAuth logins come back to " + base + oauth.CallbackPath + ", which no browser can reach: set [http] public_url")
		}
	}
	if err := web.SetBaseURL(base); err != nil {
		log.Error("owners cannot log in through the server", "error", err)
		return
	}
	log.Info("owners' OAuth logins begin at " + base + oauth.BeginPath + " and come back to " + base + oauth.CallbackPath)
}

// oauthClients returns what the proxy wraps the transport of each server
// with [mcp.servers.NAME.auth] in: its OAuth client for an owner, on the
// user's token store (owners/{owner}/ for an owner of a bearer token, so
// that no owner ever uses another's token). web, when not nil, is how
// owners log in: through the server (the error of their call carries
// the URL); without it the error names `auth login`. shared is the
// serve's state store: replicated, it holds the tokens.
func oauthClients(cfg *config.Config, log *slog.Logger, web *oauth.WebLogins, shared state.Store) (func(owner string, sc config.Server) upstream.Authorizer, error) {
	some := false
	for _, sc := range cfg.Servers {
		some = some || sc.Auth != nil
	}
	if !some {
		return nil, nil
	}
	store, _, err := authStore(cfg, shared)
	if err != nil {
		return nil, err
	}
	return func(owner string, sc config.Server) upstream.Authorizer {
		if sc.Auth == nil {
			return nil
		}
		c := newOAuthClient(cfg, sc, store, log)
		if owner != "" {
			c = oauth.New(oauth.Options{Server: sc, Store: store, Owner: owner, Web: web, Logger: log.With("owner", owner),
				LoginCommand: loginCommand(cfg, sc.Name) + " (as the operator; owners log in through the server)"})
		}
		return c
	}, nil
}

// authStore is the user's token store ($SCRATCHPAD_MCP_AUTH_DIR, else in
// the user's configuration directory). With [cluster] redis_url the
// records are on that Redis, for every replica: on shared (the serve's
// store) when given, else on one opened here, closed by done.
func authStore(cfg *config.Config, shared state.Store) (store *oauth.Store, done func(), err error) {
	dir, err := oauth.DefaultDir()
	if err != nil {
		return nil, nil, err
	}
	store, done = &oauth.Store{Dir: dir}, func() {}
	if shared == nil && cfg.Cluster.Enabled() {
		if shared, err = state.Open(cfg.Cluster, cfg.MemoryDir); err != nil {
			return nil, nil, err
		}
		done = func() { _ = shared.Close() }
	}
	if shared != nil && shared.Replicated() {
		store.Shared = shared
	}
	return store, done, nil
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
