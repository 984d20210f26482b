package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve --cpuprofile writes a profile of the run (gzip, as pprof writes
// it) when serving ends, and a path it cannot create is refused up front.
func TestServeWritesCPUProfile(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	path := filepath.Join(t.TempDir(), "cpu.prof")
	var stderr bytes.Buffer
	if code := runServe([]string{"--config", cfg, "--cpuprofile", path}, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile: %v, %d bytes", err, len(b))
	}

	stderr.Reset()
	bad := filepath.Join(t.TempDir(), "missing", "cpu.prof")
	if code := runServe([]string{"--config", cfg, "--cpuprofile", bad}, strings.NewReader(""), io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "--cpuprofile") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
