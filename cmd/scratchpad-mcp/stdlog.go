package main

import (
	"log"
	"log/slog"
	"strings"
)

type stdLogger struct{ l *slog.Logger }

func (s *stdLogger) Write(p []byte) (int, error) {
	s.l.Warn(strings.TrimSpace(string(p)))
	return len(p), nil
}

func (s *stdLogger) logger() *log.Logger { return log.New(s, "", 0) }
