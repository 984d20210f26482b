package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// serveInProcess serves cfgPath's app over streamable HTTP in this
// process (so that its descriptors are this process's) and returns its
// address.
func serveInProcess(t *testing.T, cfgPath string) (addr string, a *app) {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err = newApp(cfg, log, agents.Identity{}, appOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.proxy.Start(ctx, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.serveListener(ctx, "http", ln, time.Minute) }()
	t.Cleanup(func() {
		cancel()
		<-served
		a.proxy.Close()
	})
	return ln.Addr().String(), a
}
