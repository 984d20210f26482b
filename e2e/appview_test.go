package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// appviewDir holds the view test's npm packages (their own lock, apart
// from e2e/package.json's): ext-apps 2.0.4 (AppBridge), the TypeScript
// MCP client v2 and playwright-core, pinned by its package-lock.json.
const appviewDir = "appview"

// TestAppViewInChromium is scratchpad-mcp's own MCP App in a real host:
// drive.mjs connects the official TypeScript client to the built binary
// over stdio (declaring the MCP Apps extension), calls view as the model
// would, and lets ext-apps' AppBridge drive the page in headless
// Chromium over a 20,000-row stored output: the table renders, sorts,
// filters with RFC 9535 filters and pages, the tree and the text search
// work, and nothing is fetched from the network.
func TestAppViewInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and headless Chromium)")
	}
	node := requireNode(t)
	browser := chromiumPath(t)
	ensureAppviewModules(t)
	bin := buildServer(t)

	mem := filepath.Join(t.TempDir(), "mem")
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf("memory_dir = %q\n", mem))
	// The output as a divert would have stored it: named by the layout
	// package, in the single agent's scratchpad.
	data := rows(20_000)
	sum := sha256.Sum256(data)
	name := layout.OutputName("inventory", "list_rows", "json", sum[:])
	dir := layout.For(mem, "").Scratchpad()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := runNode(node, appviewDir, 3*time.Minute, "drive.mjs", name, browser, bin, "serve", "--config", cfg, "--log-level", "warn")
	var r struct {
		OK            bool     `json:"ok"`
		Failed        string   `json:"failed"`
		Checks        []string `json:"checks"`
		ModelTools    []string `json:"modelTools"`
		ViewText      string   `json:"viewText"`
		FirstRenderMs int      `json:"firstRenderMs"`
		FirstPageMs   int      `json:"firstPageMs"`
	}
	if jerr := json.Unmarshal([]byte(stdout), &r); jerr != nil || err != nil || !r.OK {
		t.Fatalf("drive.mjs: %v (report: %v)\nfailed: %s\npassed: %s\nstderr:\n%s\nstdout:\n%s", err, jerr, r.Failed, strings.Join(r.Checks, "; "), tail(stderr), short(stdout))
	}
	t.Logf("%d checks passed; the model was told %q; the first page rendered %d ms after the host handed the page the result (%d ms after the model's call, the browser's start included)", len(r.Checks), r.ViewText, r.FirstPageMs, r.FirstRenderMs)
	if contains(r.ModelTools, "view_page") || !contains(r.ModelTools, "view") {
		t.Errorf("the model's tools as the host filters them: %v; want view without view_page", r.ModelTools)
	}
}

// rows is a stored output of n rows under "rows", indented as upstreams
// often send it (one key a line, so the text view searches it): status
// "failed" on every tenth row, size (i mod 10,000)*10.
func rows(n int) []byte {
	type row struct {
		ID     int    `json:"id"`
		Name   string `json:"name"`
		Status string `json:"status"`
		Size   int    `json:"size"`
		Owner  string `json:"owner"`
	}
	out := struct {
		Rows []row `json:"rows"`
	}{Rows: make([]row, n)}
	for i := range n {
		st := "ok"
		if i%10 == 3 {
			st = "failed"
		}
		out.Rows[i] = row{ID: i, Name: fmt.Sprintf("row-%d", i), Status: st, Size: (i % 10_000) * 10, Owner: fmt.Sprintf("team-%d", i%7)}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return b
}

// chromiumPath is headless Chromium (Debian's package chromium, which
// scripts/deps.sh installs); missing, the test skips, or fails under
// CI=true.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	skipOrFail(t, "e2e: chromium is not installed (Debian package chromium; scripts/deps.sh installs it)")
	return ""
}

// ensureAppviewModules installs appview/'s npm packages when
// scripts/deps.sh has not (npm ci, from its lock).
func ensureAppviewModules(t *testing.T) {
	t.Helper()
	ensureNpm(t, appviewDir, []string{
		filepath.Join(appviewDir, "node_modules", "@modelcontextprotocol", "ext-apps", "package.json"),
		filepath.Join(appviewDir, "node_modules", "@modelcontextprotocol", "client", "package.json"),
		filepath.Join(appviewDir, "node_modules", "playwright-core", "package.json"),
	})
}
