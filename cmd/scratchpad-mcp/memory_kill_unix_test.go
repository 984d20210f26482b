//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// SIGKILL in the middle of a memory file's write (the file itself or
// its version in .history, whichever the kill lands in): the file is the
// old one or the new one, whole, never a mix; every version kept is
// whole; the tool never shows a temporary file; and the next process
// removes the leftovers when it opens the pad, and writes on.
func TestKillDuringMemoryWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 12 MB memory files")
	}
	cfg, mem := writeConfig(t, "\n[memory]\nmax_file_bytes = \"16MiB\"\nmax_scope_bytes = \"64MiB\"\n")
	padDir := filepath.Join(mem, "pad") // agent main's: its /memories and their versions
	file := filepath.Join(padDir, layout.PadMemoriesDir, "notes", "big.md")
	start := func() *proxyProc {
		cmd := exec.Command(binary(t), "serve", "--config", cfg)
		if testing.Verbose() {
			cmd.Stderr = os.Stderr
		}
		p := &proxyProc{cmd: cmd, c: connect(t, &mcp.CommandTransport{Command: cmd})}
		t.Cleanup(func() { _ = cmd.Process.Kill(); p.c.Close() })
		waitForTool(t, p.c, "memory")
		return p
	}

	// The old file: 12 MB of one text (a request over stdio is one line,
	// and go-sdk's stdio transport reads lines up to 16 MiB).
	oldText := strings.Repeat("old memory line 0123456789\n", 12<<20/27)
	newText := strings.Repeat("NEW MEMORY LINE 9876543210\n", 12<<20/27)
	p := start()
	memorySteps(t, p.c, []memoryStep{{map[string]any{"command": "create", "path": "/memories/notes/big.md", "file_text": oldText}, false, []string{"(revision 1)"}}})
	_ = p.cmd.Process.Kill()
	_ = p.c.Close()

	// Replace it whole (create at its revision), and kill the process as
	// soon as a temporary file shows: within the write.
	landed := false
	for attempt := 0; attempt < 3 && !landed; attempt++ {
		p := start()
		// A kill after the rename left the new file, a revision on.
		got, _ := memoryCall(t, p.c, map[string]any{"command": "view", "path": "/memories/notes/big.md", "view_range": []int{1, 1}})
		rev := revisionOf(t, got)
		landed = killDuring(t, p, padDir, func(ctx context.Context) {
			_, _ = p.c.CallTool(ctx, &mcp.CallToolParams{Name: "memory", Arguments: map[string]any{
				"command": "create", "path": "/memories/notes/big.md", "file_text": newText, "expected_revision": rev}})
		})
	}
	if !landed {
		t.Fatal("no kill landed during the write in 3 attempts")
	}
	left := temps(padDir)
	t.Logf("killed mid-write, leftover %v", relAll(mem, left))

	// The file is one version or the other; so is every version kept.
	whole := func(what string, b []byte) {
		t.Helper()
		if !bytes.Equal(b, []byte(oldText)) && !bytes.Equal(b, []byte(newText)) {
			t.Errorf("%s is neither the old file nor the new (%d bytes)", what, len(b))
		}
	}
	whole("the file", mustRead(t, file))
	versions := 0
	_ = filepath.WalkDir(filepath.Join(padDir, filepath.FromSlash(layout.PadMemoriesHistoryDir)), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if _, ok := layout.ParsePadMemoryVersionName(d.Name()); ok {
				versions++
				whole("version "+d.Name(), mustRead(t, path))
			}
		}
		return nil
	})
	if versions == 0 {
		t.Error("no version of the file kept")
	}

	// The next process: no temporary file is shown, the file reads whole,
	// a write goes through, and the leftovers are gone.
	p = start()
	listing, _ := memoryCall(t, p.c, map[string]any{"command": "view", "path": "/memories"})
	if strings.Contains(listing, ".tmp") || strings.Count(listing, "\n") != 3 || !strings.HasSuffix(listing, "\t/memories/notes/big.md") {
		t.Errorf("listing after the crash:\n%s", listing)
	}
	got, isErr := memoryCall(t, p.c, map[string]any{"command": "view", "path": "/memories/notes/big.md", "view_range": []int{1, 1}})
	if isErr || !strings.Contains(got, "old memory line") && !strings.Contains(got, "NEW MEMORY LINE") {
		t.Errorf("view after the crash: %s", short(got))
	}
	memorySteps(t, p.c, []memoryStep{{map[string]any{"command": "create", "path": "/memories/notes/big.md", "file_text": "after the crash\n", "expected_revision": revisionOf(t, got)}, false, []string{"File created successfully"}}})
	if l := temps(padDir); len(l) > 0 {
		t.Errorf("the next process left %v", relAll(mem, l))
	}
}

// revisionOf is N of an answer's last line, "(revision N)".
func revisionOf(t *testing.T, answer string) int {
	t.Helper()
	i := strings.LastIndex(answer, "(revision ")
	n := 0
	if i < 0 {
		t.Fatalf("no revision in %s", short(answer))
	}
	for _, c := range answer[i+len("(revision "):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
