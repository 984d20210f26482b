package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bigFileBytes is the size of the generated file: large enough that the
// read is diverted and the exact token count runs in the background
// (intercept's ExactCountLimit is 4 MiB).
const bigFileBytes = 5 << 20

// minNodeMajor is what the pinned packages need (@hono/node-server, a
// dependency of the SDK, requires node >= 20); scripts/deps.sh checks the
// same.
const minNodeMajor = 20

// report is what client.mjs prints.
type report struct {
	Mode                        string          `json:"mode"`
	ListChanged                 int             `json:"listChanged"`
	Server                      json.RawMessage `json:"server"`
	Tools                       []string        `json:"tools"`
	ReadTextFileHasOutputSchema bool            `json:"readTextFileHasOutputSchema"`
	Stored                      string          `json:"stored"`
	RootsAsked                  int             `json:"rootsAsked"`
	RootsAskedAtStart           int             `json:"rootsAskedAtStart"`
	Steps                       map[string]struct {
		Tool    string         `json:"tool"`
		IsError bool           `json:"isError"`
		Text    string         `json:"text"`
		Meta    map[string]any `json:"meta"`
		Ms      int            `json:"ms"`
	} `json:"steps"`
}

// fixture is everything both transports share.
type fixture struct {
	node    string
	bin     string // scratchpad-mcp built for this run
	fsEntry string // server-filesystem's entry script
	dataDir string
	big     string // the generated JSON file
	items   int    // items in it
	failed  int    // items with status "failed"
}

func TestFilesystemThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node, npm packages and a 5 MB file)")
	}
	f := &fixture{node: requireNode(t)}
	f.fsEntry = ensureNodeModules(t)
	f.bin = buildServer(t)
	f.dataDir = t.TempDir()
	f.big, f.items, f.failed = writeBigJSON(t, f.dataDir)

	t.Run("stdio", func(t *testing.T) {
		cfg, mem := f.config(t)
		r := f.runClient(t, "stdio", f.bin, "serve", "--config", cfg, "--log-level", "warn")
		f.check(t, r, mem)
	})
	t.Run("http", func(t *testing.T) {
		cfg, mem := f.config(t)
		url := startHTTP(t, f.bin, cfg, "http")
		r := f.runClient(t, "http", url+"/mcp")
		f.check(t, r, mem)
	})
	t.Run("sse", func(t *testing.T) {
		cfg, mem := f.config(t)
		url := startHTTP(t, f.bin, cfg, "sse")
		r := f.runClient(t, "sse", url+"/sse")
		f.check(t, r, mem)
	})
}

// check asserts on one client report.
func (f *fixture) check(t *testing.T, r report, mem string) {
	t.Helper()
	for _, want := range []string{"read_text_file", "list_directory", "head", "schema", "iterate_over", "grep", "read"} {
		if !contains(r.Tools, want) {
			t.Errorf("tools/list lacks %q: %v", want, r.Tools)
		}
	}
	// server-filesystem asked the client for its roots through the proxy
	// (roots/list with no call in flight goes to the only client).
	if r.RootsAsked < 1+r.RootsAskedAtStart {
		t.Errorf("server-filesystem's roots/list after roots/list_changed never reached the client (asked %d times)", r.RootsAsked)
	}
	// Over stdio, upstreams start with the client and are told its
	// capabilities: server-filesystem asks for roots as it starts.
	if r.Mode == "stdio" && r.RootsAskedAtStart == 0 {
		t.Error("over stdio, server-filesystem did not ask the client for its roots as it started")
	}
	if r.ReadTextFileHasOutputSchema {
		t.Error("read_text_file still has its outputSchema: a pointer result would fail the SDK's validation")
	}

	small := r.Steps["small_read"]
	if small.IsError || strings.Contains(small.Text, "diverted") || small.Meta["scratchpad/diverted"] != nil || !strings.HasPrefix(small.Text, "{") {
		t.Errorf("a 3-line read must pass through unchanged: %+v", small)
	}

	big := r.Steps["big_read"]
	d, _ := big.Meta["scratchpad/diverted"].(map[string]any)
	if big.IsError || d == nil || !strings.Contains(big.Text, "was diverted to the scratchpad") || !strings.Contains(big.Text, r.Stored) {
		t.Fatalf("the 5 MB read was not diverted to a pointer: %s", short(big.Text))
	}
	if tok, _ := d["tokens"].(float64); tok < 100_000 {
		t.Errorf("diverted tokens = %v, want a 5 MB file's worth (> 100000)", d["tokens"])
	}
	if len(big.Text) > 4000 {
		t.Errorf("pointer is %d bytes; it should be short", len(big.Text))
	}
	// The stored output is the file's JSON (re-indented for the line
	// tools, so compared compacted).
	stored := findFile(t, mem, r.Stored)
	if a, b := compact(t, mustRead(t, stored)), compact(t, mustRead(t, f.big)); !bytes.Equal(a, b) {
		t.Errorf("stored output (%d bytes compacted) differs from the file (%d bytes compacted)", len(a), len(b))
	}

	schema := r.Steps["schema"].Text
	if r.Steps["schema"].IsError || !strings.Contains(schema, "items") || !strings.Contains(schema, commas(f.items)) || !strings.Contains(schema, "owner") {
		t.Errorf("schema lacks items (%d), owner: %s", f.items, short(schema))
	}

	iter := r.Steps["iterate_over"].Text
	var rows []map[string]any
	body := iter
	if i := strings.LastIndex(body, "\n"); i > 0 {
		body = body[:i] // the footer line
	}
	if err := json.Unmarshal([]byte(body), &rows); err != nil {
		t.Errorf("iterate_over: not a JSON array then a footer: %v\n%s", err, short(iter))
	} else if len(rows) != 5 || rows[0]["_index"] != float64(10) || rows[0]["id"] != float64(10) || rows[0]["owner.name"] != "user-10" {
		t.Errorf("iterate_over rows = %v, want 5 rows from _index 10 with id and owner.name", rows)
	}
	if !strings.Contains(iter, "[10..15)") {
		t.Errorf("iterate_over footer lacks the window [10..15): %s", short(iter))
	}

	grep := r.Steps["grep"].Text
	if n := len(regexp.MustCompile(`(?m)^>.*"status": "failed"`).FindAllString(grep, -1)); r.Steps["grep"].IsError || n != 3 {
		t.Errorf("grep shows %d matches, want 3 (max_matches): %s", n, short(grep))
	}
	if !strings.Contains(grep, commas(f.failed)) && !strings.Contains(grep, strconv.Itoa(f.failed)) {
		t.Errorf("grep footer lacks the total of %d matching lines: %s", f.failed, short(grep))
	}

	over := r.Steps["over_cap"]
	var e struct {
		Error       string `json:"error"`
		Message     string `json:"message"`
		Suggestions []any  `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(over.Text), &e); err != nil || e.Error != "read_too_large" || len(e.Suggestions) == 0 || e.Message == "" {
		t.Errorf("over-cap read: want a structured read_too_large error with suggestions, got %v: %s", err, short(over.Text))
	}
	t.Logf("%s: tools/list_changed notifications seen: %d", r.Mode, r.ListChanged)
	for _, name := range []string{"small_read", "big_read", "schema", "iterate_over", "grep", "over_cap"} {
		t.Logf("%s %s: %d ms", r.Mode, name, r.Steps[name].Ms)
	}
}

// runClient runs client.mjs and decodes its report.
func (f *fixture) runClient(t *testing.T, mode string, target ...string) report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"client.mjs", mode, f.big}, target...)
	cmd := exec.CommandContext(ctx, f.node, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r report
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil || err != nil {
		t.Fatalf("client.mjs %s: %v (report: %v)\nstderr:\n%s\nstdout:\n%s", mode, err, jerr, tail(stderr.String()), short(stdout.String()))
	}
	return r
}

// runNode runs node with args in dir (e2e/ when dir is "") and returns
// what it printed. node runs in a process group of its own, killed whole
// when timeout passes and again once node has exited, so the children it
// started (a stdio server and that server's upstreams, the SDK's probes,
// Chromium) do not outlive the run.
func runNode(node, dir string, timeout time.Duration, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	ownGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if cmd.Process != nil {
		_ = killGroup(cmd) // what is left of the group once node exited
	}
	return out.String(), errOut.String(), err
}

// config goes the way a user does: converts a Claude Desktop config that
// runs server-filesystem on the data directory with scratchpad-mcp init,
// points memory_dir at a fresh directory, and checks the result with
// scratchpad-mcp doctor.
func (f *fixture) config(t *testing.T) (path, mem string) {
	t.Helper()
	dir := t.TempDir()
	mem = filepath.Join(dir, "mem")
	path = filepath.Join(dir, "scratchpad.toml")
	tmpl := mustRead(t, filepath.Join("..", "testdata", "e2e", "claude_desktop_config.json"))
	desktop := strings.NewReplacer("@NODE@", f.node, "@SERVER_FILESYSTEM@", f.fsEntry, "@DATA_DIR@", f.dataDir).Replace(string(tmpl))
	desktopPath := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(desktopPath, []byte(desktop), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(f.bin, "init", "--from-claude-desktop", desktopPath, "--out", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"mcpServers"`) {
		t.Fatalf("scratchpad-mcp init: %v\n%s", err, out)
	}
	text := string(mustRead(t, path))
	const defaultLine = `# memory_dir = "~/.local/share/scratchpad-mcp"`
	if !strings.Contains(text, defaultLine) {
		t.Fatalf("init output lacks the memory_dir line to edit:\n%s", text)
	}
	text = strings.Replace(text, defaultLine, fmt.Sprintf("memory_dir = %q", mem), 1)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(f.bin, "doctor", "--config", path).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^  read_text_file +intercepted at >= 5120 tokens$`).Match(out) {
		t.Fatalf("scratchpad-mcp doctor: %v\n%s", err, out)
	}
	return path, mem
}

var npmOnce sync.Mutex

// ensureNodeModules returns server-filesystem's entry script, running npm
// ci first when scripts/deps.sh has not installed the packages.
func ensureNodeModules(t *testing.T) string {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	ensureNpm(t, ".", append([]string{entry}, npmFiles...))
	return entry
}

// ensureNpm runs npm ci in dir (an npm project: e2e/ or one below it)
// when scripts/deps.sh has not installed its packages, that is when one
// of the wanted files (relative to e2e/) is missing.
func ensureNpm(t *testing.T, dir string, want []string) {
	t.Helper()
	npmOnce.Lock()
	defer npmOnce.Unlock()
	missing := func() string {
		for _, f := range want {
			if !fileExists(f) {
				return f
			}
		}
		return ""
	}
	if missing() == "" {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipOrFail(t, "e2e: npm is not on PATH; install npm to run the end-to-end tests")
	}
	t.Logf("e2e: %s missing, running npm ci (scripts/deps.sh does this ahead of time)", filepath.Join(dir, "node_modules"))
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", filepath.Join("e2e", dir), err, out)
	}
	if f := missing(); f != "" {
		t.Fatalf("npm ci did not install %s", f)
	}
}

// npmFiles are files of the pinned npm packages the tests run, relative to
// e2e/: when one is missing, ensureNodeModules installs them.
var npmFiles = []string{
	filepath.Join("node_modules", "@modelcontextprotocol", "sdk", "package.json"),
	filepath.Join("node_modules", "@modelcontextprotocol", "client", "package.json"),
	filepath.Join("node_modules", "@modelcontextprotocol", "server", "package.json"),
	everythingEntry,
	systemMonitorEntry,
	filepath.Join("node_modules", "@modelcontextprotocol", "ext-apps", "package.json"),
	conformanceEntry,
	conformance2026Entry,
}

// skipOrFail skips the test, saying why, when a peer it needs (node, npm)
// is missing; under CI=true (set by CI services) it fails instead, so a
// CI image without the peers cannot pass by skipping every e2e test.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf(format+" (CI=true: a missing peer fails the run instead of skipping it)", args...)
	}
	t.Skipf(format, args...)
}

// everythingEntry is @modelcontextprotocol/server-everything's entry
// script, relative to e2e/.
var everythingEntry = filepath.Join("node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")

// requireNode returns node's path, or skips the test (fails it under
// CI=true, see skipOrFail), saying why, when node is missing or too old for
// the pinned packages.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "e2e: node is not on PATH; install Node.js >= %d and npm to run the end-to-end tests (scripts/deps.sh installs the npm packages)", minNodeMajor)
	}
	if out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output(); err != nil {
		t.Fatalf("node does not run: %v", err)
	} else if major, _ := strconv.Atoi(strings.TrimSpace(string(out))); major < minNodeMajor {
		skipOrFail(t, "e2e: node %s is too old; the pinned npm packages need node >= %d", strings.TrimSpace(string(out)), minNodeMajor)
	}
	return node
}

// buildServer builds scratchpad-mcp from this checkout.
func buildServer(t *testing.T) string {
	t.Helper()
	statSources(t)
	bin := filepath.Join(t.TempDir(), "scratchpad-mcp")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/scratchpad-mcp/scratchpad-mcp/cmd/scratchpad-mcp")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building scratchpad-mcp: %v\n%s", err, out)
	}
	return bin
}

// statSources stats every Go source of the module and the client script.
// This test binary
// imports none of them, so without this go test would replay a cached
// pass after the server's code changed: the test cache is keyed on the
// files a test touched.
func statSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != "..") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".mjs") || d.Name() == "go.mod" || d.Name() == "go.sum" || d.Name() == "package-lock.json") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// startHTTP runs scratchpad-mcp over streamable HTTP on a free loopback
// port and returns its /mcp URL; it is stopped with SIGTERM at cleanup.
func startHTTP(t *testing.T, bin, cfg, transport string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfg, "--transport", transport, "--addr", "127.0.0.1:0", "--log-level", "info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		addrRE := regexp.MustCompile(`msg=serving .*addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan error, 1)
		go func() { <-done; exited <- cmd.Wait() }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("scratchpad-mcp did not stop within 10s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("scratchpad-mcp log:\n%s", tail(logs.String()))
		}
	})
	select {
	case addr := <-addrc:
		return "http://" + addr
	case <-done:
		t.Fatalf("scratchpad-mcp exited before serving:\n%s", logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("scratchpad-mcp did not start serving within 30s:\n%s", logs.String())
	}
	return ""
}

// writeBigJSON writes a pretty-printed listing of at least bigFileBytes:
// items with ids, a status (every third "failed"), an owner object and
// tags, the shape of a real API dump.
func writeBigJSON(t *testing.T, dir string) (path string, items, failed int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("{\n  \"kind\": \"ItemList\",\n  \"items\": [\n")
	statuses := []string{"ok", "pending", "failed"}
	for i := 0; b.Len() < bigFileBytes; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		st := statuses[i%3]
		if st == "failed" {
			failed++
		}
		fmt.Fprintf(&b, `    {
      "id": %d,
      "name": "item-%06d",
      "status": %q,
      "owner": {
        "name": "user-%d",
        "email": "user-%d@example.com"
      },
      "tags": ["alpha", "beta", "zone-%d"],
      "description": "Generated record %d for the end-to-end test of scratchpad-mcp."
    }`, i, i, st, i%50, i%50, i%7, i)
		items++
	}
	b.WriteString("\n  ]\n}\n")
	path = filepath.Join(dir, "big.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.Bytes()) {
		t.Fatal("generated JSON is invalid")
	}
	return path, items, failed
}

func findFile(t *testing.T, root, name string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatalf("stored output %s not found under %s", name, root)
	}
	return found
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compact(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return out.Bytes()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// commas formats n as the pointer and footers do: 12,345.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func short(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	l.b.WriteString(s)
	l.mu.Unlock()
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
