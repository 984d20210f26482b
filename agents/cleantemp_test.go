package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Agents without a run share one stored-outputs folder. A crash's
// temporary files there are removed when the first agent of the folder
// starts, never while another agent of it is live: its divert may be
// writing one (the soak's session flood failed a divert with "rename …:
// no such file" when each new session swept the folder).
func TestCleanTempSparesALiveAgentsWrite(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	r := newRegistry(t, cfg)
	scratch := layout.For(cfg.MemoryDir, "").Scratchpad()
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(scratch, strings.Replace(layout.TempPattern("old.json"), "*", "1", 1))
	if err := os.WriteFile(leftover, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(sessionCtx(t, r, "s1", Identity{Agent: "main"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("the first agent left a crash's temporary file: %v", err)
	}
	inFlight := filepath.Join(scratch, strings.Replace(layout.TempPattern("new.json"), "*", "2", 1))
	if err := os.WriteFile(inFlight, []byte("being written"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Resolve(sessionCtx(t, r, "s2", Identity{Agent: "other"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inFlight); err != nil {
		t.Fatalf("a second agent removed the first one's write in flight: %v", err)
	}
	r.Finish("s1")
	r.Finish("s2")
	if _, err := r.Resolve(sessionCtx(t, r, "s3", Identity{Agent: "main"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(inFlight); !os.IsNotExist(err) {
		t.Fatalf("the first agent after all had finished left the temporary file: %v", err)
	}
}
