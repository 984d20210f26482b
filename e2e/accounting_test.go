package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// TestAccountingWithServerFilesystem checks the figures the product rests
// on with the real server-filesystem, whose read_text_file answers with
// the text twice (content and structuredContent), as every tool with an
// outputSchema does: a ~3,500-token file passes through at the default
// min_tokens = 5120, a large one is diverted with a pointer whose figure is
// the counter's count of its text, and the budget's "left" falls by each
// passed-through result's exact count. The client is go-sdk's, over stdio.
func TestAccountingWithServerFilesystem(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and server-filesystem)")
	}
	f := &fixture{node: requireNode(t)}
	f.fsEntry = ensureNodeModules(t)
	f.bin = buildServer(t)
	f.dataDir = t.TempDir()
	counter := tokens.ForModel("", "") // the config's default model
	small := wordsOfTokens(counter, 3500)
	big := wordsOfTokens(counter, 40000)
	for name, text := range map[string]string{"small.txt": small, "big.txt": big} {
		if err := os.WriteFile(filepath.Join(f.dataDir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := f.config(t)

	call := f.fsSession(t, cfg, "accounting-e2e")
	read := "read_text_file"
	// The large file: diverted, its figure the count of its text.
	pointer, _ := call(read, map[string]any{"path": filepath.Join(f.dataDir, "big.txt")})
	m := regexp.MustCompile(`scratchpad: (~?)([\d,]+) tokens \(threshold 5,120\) would have entered`).FindStringSubmatch(pointer)
	if m == nil {
		t.Fatalf("big.txt not diverted as expected:\n%s", short(pointer))
	}
	if got, want := atoi(m[2]), counter.CountString(big); m[1] != "" || got != want {
		t.Errorf("pointer figure %s%d, want exactly %d (the text, once)", m[1], got, want)
	}
	file := regexp.MustCompile(`file: (\S+)`).FindStringSubmatch(pointer)
	if file == nil {
		t.Fatalf("no file in the pointer:\n%s", short(pointer))
	}
	head := func() (n, left int) {
		out, _ := call("head", map[string]any{"file": file[1], "lines": 2})
		f := regexp.MustCompile(`~([\d,]+) tokens, ~([\d,]+) left of`).FindStringSubmatch(out)
		if f == nil {
			t.Fatalf("no footer: %s", short(out))
		}
		return atoi(f[1]), atoi(f[2])
	}
	n, left := head()

	// The ~3,500-token file passes through (not counted twice) and is
	// charged at its exact count.
	got, _ := call(read, map[string]any{"path": filepath.Join(f.dataDir, "small.txt")})
	if strings.Contains(got, "diverted") || got != small {
		t.Fatalf("small.txt (%d tokens) did not pass through whole: %s", counter.CountString(small), short(got))
	}
	n2, left2 := head()
	if want := left - counter.CountString(small) - n; n2 != n || left2 != want {
		t.Errorf("left after the pass-through: %d, want %d - %d - %d = %d", left2, left, counter.CountString(small), n, want)
	}
}

// wordsOfTokens is text of about n tokens (counted by c).
func wordsOfTokens(c *tokens.Counter, n int) string {
	var b strings.Builder
	for i := 0; c.CountString(b.String()) < n; i++ {
		for j := 0; j < 200; j++ {
			fmt.Fprintf(&b, "line %d word%d alpha beta gamma\n", i, j)
			i++
		}
	}
	return b.String()
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

// fsSession serves cfg (server-filesystem behind scratchpad-mcp) over
// stdio to a go-sdk client named name, waits until read_text_file is
// listed, and returns a function that calls a tool: its text blocks
// joined, and the result. The session ends with the test.
func (f *fixture) fsSession(t *testing.T, cfg, name string) func(tool string, args map[string]any) (string, *mcp.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(f.bin, "serve", "--config", cfg, "--log-level", "warn")},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	testwait.For(t, "read_text_file to be listed", func() bool {
		for tl, err := range cs.Tools(ctx, nil) {
			if err == nil && tl.Name == "read_text_file" {
				return true
			}
		}
		return false
	})
	return func(tool string, args map[string]any) (string, *mcp.CallToolResult) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String(), res
	}
}
