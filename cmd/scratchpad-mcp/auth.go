package main

import (
	"log/slog"
	"net"
	"strings"
	"sync"

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
	ownerClient := func(owner string, sc config.Server) *oauth.Client {
		return oauth.New(oauth.Options{Server: sc, Store: store, Owner: owner, Web: web, Logger: log.With("owner", owner),
			LoginCommand: loginCommand(cfg, sc.Name) + " (as the operator; owners log in through the server)"})
	}
	var made ownerClients
	if web != nil && store.Shared != nil {
		// Replicas: a login begun on one is completed on whichever the
		// redirect reaches, by its client of the owner's server (the one
		// its pool uses, so that its upstream waiting for the login wakes
		// at once; else a new one: the token goes to the shared store
		// either way, and the other replicas' upstreams read it there).
		web.Store = store
		web.Logger = log
		web.Clients = func(owner, server string) (*oauth.Client, bool) {
			for _, sc := range cfg.Servers {
				if sc.Name == server && sc.Auth != nil && sc.Auth.Grant == config.GrantAuthorizationCode && !sc.Shared {
					return made.get(owner, sc, ownerClient), true
				}
			}
			return nil, false
		}
	}
	return func(owner string, sc config.Server) upstream.Authorizer {
		if sc.Auth == nil {
			return nil
		}
		if owner == "" {
			return newOAuthClient(cfg, sc, store, log)
		}
		c := ownerClient(owner, sc)
		if web != nil && store.Shared != nil {
			made.put(owner, sc.Name, c)
		}
		return c
	}, nil
}

// ownerClients are the OAuth clients of owners' servers this replica made
// last, for the redirect back of a login through the server to complete
// with.
type ownerClients struct {
	mu sync.Mutex
	m  map[[2]string]*oauth.Client
}

func (o *ownerClients) put(owner, server string, c *oauth.Client) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[[2]string]*oauth.Client{}
	}
	o.m[[2]string{owner, server}] = c
}

// get is the client last made for owner's sc, else a new one (kept).
func (o *ownerClients) get(owner string, sc config.Server, newClient func(string, config.Server) *oauth.Client) *oauth.Client {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c := o.m[[2]string{owner, sc.Name}]; c != nil {
		return c
	}
	if o.m == nil {
		o.m = map[[2]string]*oauth.Client{}
	}
	c := newClient(owner, sc)
	o.m[[2]string{owner, sc.Name}] = c
	return c
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
