//go:build unix

package main

import (
	"context"
	"fmt"
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
// ends. Only SIGKILL ends it. While it stays, each SIGUSR1 gets the line
// [stubbornAlive] on stderr: the staying itself answers, so a test sees
// it outlive its input as an event, not as the absence of an exit.
const envStubborn = "SCRATCHPAD_STUBBORN"

// stubbornAlive is the stubborn upstream's answer to SIGUSR1 after its
// input ended.
const stubbornAlive = "stubborn: input ended, still here"

func maybeStubborn() {
	if os.Getenv(envStubborn) != "1" {
		return
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT, syscall.SIGPIPE)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1) // from the start: its default would end the process
	t := &mcp.IOTransport{Reader: os.Stdin, Writer: nopWriteCloser{os.Stdout}}
	_ = testupstream.New().Run(context.Background(), t)
	stay := time.After(time.Hour)
	for {
		select {
		case <-usr1:
			fmt.Fprintln(os.Stderr, stubbornAlive)
		case <-stay:
			os.Exit(0)
		}
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
