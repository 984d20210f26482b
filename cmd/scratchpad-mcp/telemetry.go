package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/dashboard"
	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// telemetryCloseWait bounds the flush of spans, metrics and audit lines
// at shutdown: an endpoint that is down must not hold the exit.
const telemetryCloseWait = 5 * time.Second

// openTelemetry opens the [telemetry] provider (nil when nothing is
// configured: every call on it is then a no-op).
func openTelemetry(cfg *config.Config) (*telemetry.Provider, error) {
	p, err := telemetry.Open(context.Background(), cfg.Telemetry, telemetry.Options{Version: versionString()})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", configName(cfg), err) // err names the key or variable
	}
	return p, nil
}

// closeTelemetry flushes and stops the provider, bounded.
func closeTelemetry(p *telemetry.Provider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), telemetryCloseWait)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		log.Warn("telemetry: flush at shutdown", "error", err)
	}
}

// listenMetrics takes [telemetry] metrics_addr, a listener of its own
// (never the MCP port: the metrics are every owner's). An address that
// cannot be taken is logged as a warning naming the key, and serving goes
// on without metrics: a second instance of the same config (a desktop
// client starting it twice) must still give its client the tools.
// Nil when no metrics are served.
func listenMetrics(cfg *config.Config, p *telemetry.Provider, log *slog.Logger) net.Listener {
	if cfg.Telemetry.MetricsAddr == "" || p.MetricsHandler() == nil {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.Telemetry.MetricsAddr)
	if err != nil {
		log.Warn("metrics are not served; the tools are", "error", config.MetricsAddrError(cfg.Path, err))
		return nil
	}
	return ln
}

// serveMetrics serves GET /metrics on ln until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, p *telemetry.Provider, log *slog.Logger) {
	mux := http.NewServeMux()
	metrics := p.MetricsHandler()
	// Like every other listener: a page on another host that rebinds its
	// name to loopback reads no owner, agent or tool name here.
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if frontdoor.RefuseRebound(w, r) {
			return
		}
		metrics.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info("serving metrics", "addr", ln.Addr().String(), "path", "/metrics")
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("metrics listener", "error", err)
	}
}

// dashboardHandler is /dashboard of the MCP listener: behind the front
// door, so the owner is the bearer token's and each owner sees its own.
func (a *app) dashboardHandler() http.Handler {
	return dashboard.Handler(dashboard.Options{
		Owner: func(r *http.Request) string { return frontdoor.CallerOf(r.Context()).Owner },
		Calls: a.telemetry.Calls,
		Usage: func(owner string) []budget.Usage { return usageOf(a.cfg.MemoryDir, owner) },
	})
}

// usageOf reads owner's usage.jsonl; a missing or unreadable file is no
// records (the page says none finished).
func usageOf(memoryDir, owner string) []budget.Usage {
	recs, _ := budget.ReadUsage(layout.For(memoryDir, owner).Usage(), "")
	return recs
}
