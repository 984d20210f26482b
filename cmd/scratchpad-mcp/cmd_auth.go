package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

func init() {
	commands["auth"] = command{
		summary: "auth login|status|logout: OAuth logins to remote upstreams ([mcp.servers.NAME.auth])",
		example: "scratchpad-mcp auth login --config scratchpad.toml linear\nscratchpad-mcp auth status --config scratchpad.toml\nscratchpad-mcp auth logout --config scratchpad.toml linear",
		run:     runAuth,
	}
}

// runAuth is `scratchpad-mcp auth login|status|logout [--config F] [NAME]`.
func runAuth(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("auth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file (TOML) whose [mcp.servers.NAME.auth] to use")
	timeout := fs.Duration("timeout", 5*time.Minute, "login: how long to wait for the browser's redirect")
	owner := fs.String("owner", "", "a bearer token's owner whose credentials these are (default: yours, the operator's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp auth login [--config F] [--owner O] NAME")
		fmt.Fprintln(stderr, "       scratchpad-mcp auth status [--config F] [--owner O] [NAME...]")
		fmt.Fprintln(stderr, "       scratchpad-mcp auth logout [--config F] [--owner O] NAME")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "login runs the OAuth authorization code flow for a server: it prints the authorization URL")
		fmt.Fprintf(stderr, "and opens it with the command in $%s (the URL its last argument) or the system's\n", oauth.EnvBrowser)
		fmt.Fprintln(stderr, "browser, and waits for the redirect on 127.0.0.1. A client_credentials server gets its token at")
		fmt.Fprintln(stderr, "once. Tokens are stored per user, outside memory_dir, mode 0600:")
		dir, err := oauth.DefaultDir()
		if err != nil {
			dir = err.Error()
		}
		fmt.Fprintf(stderr, "  %s (override: $%s); an owner's under owners/OWNER/.\n", dir, oauth.EnvAuthDir)
		fmt.Fprintln(stderr, "With bearer tokens, owners log in through the server itself (their call's error carries the URL).")
		fs.PrintDefaults()
	}
	pos, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fs.Usage()
		return 2
	}
	sub, names := pos[0], pos[1:]
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "scratchpad-mcp auth %s: %s\n", sub, fmt.Sprintf(format, a...))
		return 1
	}
	switch sub {
	case "login", "logout":
		if len(names) != 1 {
			fmt.Fprintf(stderr, "scratchpad-mcp auth %s: name one server\n", sub)
			fs.Usage()
			return 2
		}
	case "status":
	default:
		fmt.Fprintf(stderr, "scratchpad-mcp auth: unknown subcommand %q\n", sub)
		fs.Usage()
		return 2
	}
	cfg, err := loadAuthConfig(*cfgPath)
	if err != nil {
		return fail("%v", err)
	}
	store, done, err := authStore(cfg, nil)
	if err != nil {
		return fail("%v", err)
	}
	defer done()
	servers, unset, err := authServers(cfg, names)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp auth %s: %v\n", sub, err)
		return 2
	}
	if sub != "status" && len(unset) > 0 {
		return fail("%s: server %q needs %s", configName(cfg), unset[0].Name, missingEnv(unset[0]))
	}
	log := slog.New(slog.DiscardHandler)
	if *owner != "" {
		if err := agents.CheckOwner(*owner); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp auth %s: %v\n", sub, err)
			return 2
		}
	}
	client := func(sc config.Server) *oauth.Client {
		if *owner == "" {
			return newOAuthClient(cfg, sc, store, log)
		}
		return oauth.New(oauth.Options{Server: sc, Store: store, Owner: *owner, Logger: log, LoginCommand: loginCommand(cfg, sc.Name)})
	}
	switch sub {
	case "login":
		sc := servers[0]
		ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
		defer cancel()
		ctx, cancelT := context.WithTimeout(ctx, *timeout)
		defer cancelT()
		c := client(sc)
		if err := c.Login(ctx, oauth.LoginOptions{Out: stderr}); err != nil {
			return fail("%v", err)
		}
		st, _ := c.Status()
		fmt.Fprintf(stdout, "logged in to %s%s\n", sc.Name, describeAuth(st))
		return 0
	case "logout":
		sc := servers[0]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		had, err := client(sc).Logout(ctx)
		if err != nil {
			return fail("%v", err)
		}
		if !had {
			fmt.Fprintf(stdout, "%s: not logged in (nothing stored)\n", sc.Name)
			return 0
		}
		fmt.Fprintf(stdout, "logged out of %s: its tokens are revoked where the server allows it, and removed\n", sc.Name)
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tGRANT\tSTATE\tSCOPES\tEXPIRES")
	for _, sc := range servers {
		st, err := client(sc).Status()
		state := authState(st, err)
		exp := "-"
		if !st.Expiry.IsZero() {
			exp = st.Expiry.Local().Format(time.RFC3339)
		}
		scope := st.Scope
		if scope == "" {
			scope = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sc.Name, sc.Auth.Grant, state, scope, exp)
	}
	for _, sk := range unset {
		fmt.Fprintf(tw, "%s\t-\tNOT LOADED: needs %s\t-\t-\n", sk.Name, missingEnv(sk))
	}
	tw.Flush()
	// The servers this command does not concern are said too: a serve
	// with this environment would stop at them.
	for _, sk := range cfg.Skipped {
		if !slices.ContainsFunc(unset, func(u config.SkippedServer) bool { return u.Name == sk.Name }) {
			fmt.Fprintf(stdout, "not loaded (no [auth], not needed here): %s needs %s\n", sk.Name, missingEnv(sk))
		}
	}
	fmt.Fprintf(stdout, "\ntokens: %s\n", store)
	return 0
}

// loadAuthConfig is [loadConfig] where a server whose table needs an
// unset environment variable is left out ([config.Options].SkipServersWithUnsetEnv):
// one server's missing secret does not stop the status of the others; nor
// does a tokens file not made yet (bearer tokens are not auth's business).
func loadAuthConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.LoadWith(path, &config.Options{SkipServersWithUnsetEnv: true, TokensFileMayBeMissing: true})
}

// missingEnv says what a skipped server lacks: "environment variable X
// (not set)" or "environment variables X, Y (not set)".
func missingEnv(sk config.SkippedServer) string {
	if len(sk.MissingEnv) == 1 {
		return "environment variable " + sk.MissingEnv[0] + " (not set)"
	}
	return "environment variables " + strings.Join(sk.MissingEnv, ", ") + " (not set)"
}

// authServers are the servers named (all with [auth] when none is), each
// checked to have an [auth] table, and the ones of those the config left
// out for an unset environment variable.
func authServers(cfg *config.Config, names []string) ([]config.Server, []config.SkippedServer, error) {
	var withAuth []string
	var all []config.Server
	for _, sc := range cfg.Servers {
		if sc.Auth != nil {
			withAuth = append(withAuth, sc.Name)
			all = append(all, sc)
		}
	}
	skipped := func(name string) (config.SkippedServer, bool) {
		i := slices.IndexFunc(cfg.Skipped, func(sk config.SkippedServer) bool { return sk.Name == name })
		if i < 0 {
			return config.SkippedServer{}, false
		}
		return cfg.Skipped[i], true
	}
	var unset []config.SkippedServer
	if len(names) == 0 {
		for _, sk := range cfg.Skipped {
			if sk.Auth {
				unset = append(unset, sk)
			}
		}
		if len(all) == 0 && len(unset) == 0 {
			return nil, nil, fmt.Errorf("%s: no server has an [mcp.servers.NAME.auth] table", configName(cfg))
		}
		return all, unset, nil
	}
	var out []config.Server
	for _, n := range names {
		if sk, ok := skipped(n); ok {
			unset = append(unset, sk)
			continue
		}
		sc := cfg.Server(n)
		switch {
		case sc == nil && len(withAuth) > 0:
			return nil, nil, fmt.Errorf("%s: no server %q (servers with [auth]: %s)", configName(cfg), n, strings.Join(withAuth, ", "))
		case sc == nil:
			return nil, nil, fmt.Errorf("%s: no server %q (and none has an [auth] table; pass --config?)", configName(cfg), n)
		case sc.Auth == nil:
			return nil, nil, fmt.Errorf("%s: server %q has no [mcp.servers.%s.auth] table: it needs no login", configName(cfg), n, n)
		}
		out = append(out, *sc)
	}
	return out, unset, nil
}

// authState is a status in a word or three, for `auth status` and doctor.
func authState(st oauth.Status, err error) string {
	switch {
	case err != nil:
		return "unreadable: " + err.Error()
	case !st.LoggedIn && st.Refused != "":
		return "NEEDS LOGIN (" + st.Refused + ")"
	case !st.LoggedIn && st.Grant == config.GrantClientCredentials:
		return "no token yet (got at the first call)"
	case !st.LoggedIn:
		return "not logged in"
	case st.Expired && st.Refreshable:
		return "logged in (token expired; refreshed at the next call)"
	case st.Expired && st.Grant == config.GrantClientCredentials:
		return "token expired (a new one at the next call)"
	case st.Expired:
		return "EXPIRED (log in again)"
	}
	return "logged in"
}

func describeAuth(st oauth.Status) string {
	var parts []string
	if st.Scope != "" {
		parts = append(parts, "scope "+st.Scope)
	}
	if !st.Expiry.IsZero() {
		parts = append(parts, "token expires "+st.Expiry.Local().Format(time.RFC3339))
	}
	if st.Refreshable {
		parts = append(parts, "refreshed by itself")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
