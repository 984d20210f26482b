package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// An MCP Bundle (make mcpb) starts `serve --config ${user_config.config_file}
// --memory-dir ${user_config.memory_dir}`: the host fills in what the user
// chose at install. A field left blank arrives as "" from a conformant
// host, and as the placeholder itself from some others; both mean "not
// given" here, so a bundle installed with no config serves the embedded
// defaults instead of failing on a file named "${user_config.…}".

// hostPlaceholder reports whether s is a bundle host's placeholder that
// was left unfilled.
func hostPlaceholder(s string) bool {
	return strings.HasPrefix(s, "${user_config.") && strings.HasSuffix(s, "}")
}

// givenPath is s, or "" when it is an unfilled host placeholder.
func givenPath(s string) string {
	if hostPlaceholder(s) {
		return ""
	}
	return s
}

// memoryDirFlag is --memory-dir made absolute (~ is the home directory),
// "" when it was not given.
func memoryDirFlag(s string) (string, error) {
	s = givenPath(s)
	if s == "" {
		return "", nil
	}
	if s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, `~\`) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("--memory-dir %q: %w", s, err)
		}
		s = filepath.Join(home, s[1:])
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", fmt.Errorf("--memory-dir %q: %w", s, err)
	}
	return abs, nil
}
