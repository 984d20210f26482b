package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/dashboard"
	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

func init() {
	commands["dashboard"] = command{
		summary: "serve the dashboard of what was kept out of the context on a loopback port",
		example: "scratchpad-mcp dashboard --config scratchpad.toml\nscratchpad-mcp dashboard --config scratchpad.toml --addr 127.0.0.1:9470 --owner team-a",
		run:     runDashboard,
	}
}

func runDashboard(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("dashboard", flag.ContinueOnError)
	flags.SetOutput(stderr)
	cfgPath := flags.String("config", "", "config file: its memory_dir (usage.jsonl) and [telemetry] audit_log are read (default: embedded defaults)")
	addr := flags.String("addr", "127.0.0.1:0", "loopback address to serve on (port 0: any free one)")
	owner := flags.String("owner", "", "the bearer token owner whose calls and agents to show")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp dashboard [--config FILE] [--addr HOST:PORT] [--owner O]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Serves /dashboard from usage.jsonl and the audit log (set [telemetry] audit_log to a file")
		fmt.Fprintln(stderr, "for the recent calls), prints its URL and runs until interrupted.")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp dashboard: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp dashboard: %v\n", err)
		return 2
	}
	if *owner != "" {
		if err := agents.CheckOwner(*owner); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp dashboard: --owner: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveDashboard(ctx, cfg, *addr, *owner, stdout, stderr)
}

// serveDashboard serves the dashboard of cfg on addr (loopback only: the
// page has every call of the owner) until ctx ends; it prints the URL
// first.
func serveDashboard(ctx context.Context, cfg *config.Config, addr, owner string, stdout, stderr io.Writer) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !frontdoor.IsLoopbackHost(host) {
		fmt.Fprintf(stderr, "scratchpad-mcp dashboard: --addr %q: want a loopback host:port, e.g. 127.0.0.1:9470\n", addr)
		return 2
	}
	audit := cfg.Telemetry.AuditLog
	if audit == "" || audit == config.AuditStderr {
		fmt.Fprintln(stderr, "scratchpad-mcp dashboard: [telemetry] audit_log is not a file: recent calls, tools and budgets stay empty; usage.jsonl's finished agents are shown")
		audit = ""
	}
	h := dashboard.Handler(dashboard.Options{
		Owner: func(*http.Request) string { return owner },
		Calls: func(owner string) []telemetry.Record { return auditOf(audit, owner) },
		Usage: func(owner string) []budget.Usage { return usageOf(cfg.MemoryDir, owner) },
	})
	mux := http.NewServeMux()
	mux.Handle("/dashboard", h)
	mux.Handle("/dashboard/", h)
	mux.Handle("/{$}", http.RedirectHandler("/dashboard", http.StatusFound))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp dashboard: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: loopbackHostOnly(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(stdout, "dashboard: http://%s/dashboard\n", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "scratchpad-mcp dashboard: %v\n", err)
		return 1
	}
	return 0
}

// auditOf reads owner's records of the audit log at path ("" none).
func auditOf(path, owner string) []telemetry.Record {
	if path == "" {
		return nil
	}
	recs, _ := telemetry.ReadAudit(path)
	out := recs[:0]
	for _, r := range recs {
		if r.Owner == owner {
			out = append(out, r)
		}
	}
	return out
}

// loopbackHostOnly refuses a request whose Host is not a loopback name:
// a web page elsewhere cannot rebind its DNS name to 127.0.0.1 and read
// the dashboard.
func loopbackHostOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !frontdoor.IsLoopbackHost(host) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
