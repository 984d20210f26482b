//go:build unix

package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// envStubborn makes the test binary a stdio upstream that outlives its
// stdin, as servers with a timer or a connection pool do: it ignores
// SIGTERM, SIGHUP, SIGINT and SIGPIPE and stays an hour after its input
// ends. Only SIGKILL ends it.
const envStubborn = "SCRATCHPAD_STUBBORN"

func maybeStubborn() {
	if os.Getenv(envStubborn) != "1" {
		return
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	t := &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{os.Stdout}}
	_ = testupstream.New().Run(context.Background(), t)
	time.Sleep(time.Hour)
	os.Exit(0)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
