package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A TOML syntax error is reported where it is: the line and column of the
// offending byte, even when that is a line's end (the parser itself puts
// those on the next line).
func TestSyntaxErrorPosition(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
	}{
		{"unclosed table", "memory_dir = \"/tmp/x\"\n[mcp.servers.fs\ncmd = [\"x\"]\n", 2, 16},
		{"unclosed table at the end", "memory_dir = \"/tmp/x\"\n[mcp.servers.fs", 2, 15}, // its last byte: the input ends there
		{"bad value", "memory_dir = \"/tmp/x\"\n\n[agent]\nmodel = gpt-4o\n", 4, 9},
		{"unterminated string", "memory_dir = \"/tmp/x\n", 1, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.toml")
			if err := os.WriteFile(p, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load: %v", err)
			}
			if e.Line != tc.line || e.Col != tc.col {
				t.Errorf("reported at %d:%d, want %d:%d (%v)", e.Line, e.Col, tc.line, tc.col, err)
			}
		})
	}
}
