package state

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
)

// defaultReplica names this process: host:pid.
func defaultReplica() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "host"
	}
	return fmt.Sprintf("%s:%d", h, os.Getpid())
}

// isConnErr reports errors of a connection that broke mid-command.
func isConnErr(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "connection refused")
}
