package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

// pad snapshot NAME, pad snapshots, pad restore NAME (a snapshot) beside
// pad restore N (a history version).
func TestPadSnapshotCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pad")
	if code, out, errOut := runCLI(t, "pad", "snapshot", "before", "--dir", dir); code != 0 || !strings.Contains(out, `snapshot "before" taken`) {
		t.Fatalf("snapshot: %d %s %s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "pad", "snapshots", "--dir", dir); code != 0 || out != "before\n" {
		t.Fatalf("snapshots: %d %q", code, out)
	}
	if code, out, errOut := runCLI(t, "pad", "restore", "before", "--dir", dir); code != 0 || !strings.Contains(out, `restored snapshot "before"`) {
		t.Fatalf("restore NAME: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "pad", "restore", "1", "--dir", dir); code != 0 || strings.Contains(out, "snapshot") {
		t.Fatalf("restore N: %d %s %s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "pad", "restore", "nope", "--dir", dir); code != 1 || !strings.Contains(errOut, "no such snapshot") {
		t.Fatalf("restore nope: %d %s", code, errOut)
	}
	if code, _, _ := runCLI(t, "pad", "snapshot", "--dir", dir); code != 2 {
		t.Fatalf("snapshot without a name: %d", code)
	}
	// The keyed values' history: history, diff and restore N with --keys.
	p, err := pad.Open(dir, pad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"1", "2"} {
		if _, err := p.UpdateKeys("t", []pad.KeyOp{{Op: pad.OpSet, Key: "k", Value: json.RawMessage(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, _ := runCLI(t, "pad", "history", "--keys", "--dir", dir); code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("history --keys: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "pad", "diff", "--keys", "--dir", dir); code != 0 || !strings.Contains(out, "-k = 1\n+k = 2") {
		t.Fatalf("diff --keys: %d %q", code, out)
	}
	if code, out, _ := runCLI(t, "pad", "restore", "2", "--keys", "--dir", dir); code != 0 || !strings.Contains(out, "+k = 1") {
		t.Fatalf("restore 2 --keys: %d %q", code, out)
	}
}
