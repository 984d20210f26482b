package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformance2026Entry is the CLI of @modelcontextprotocol/conformance
// 0.2.0-alpha.12 (the 2026-07-28 suite), installed under the npm alias
// conformance-2026 beside 0.1.16, relative to e2e/.
var conformance2026Entry = filepath.Join("node_modules", "conformance-2026", "dist", "index.js")

// conformance2026Requirements is the suite's frozen list of what the
// revision requires (and runs unscored), relative to e2e/.
var conformance2026Requirements = filepath.Join("node_modules", "conformance-2026", "requirements", "2026-07-28.yaml")

// known2026 lists the checks that may still do worse through the proxy.
const known2026 = "testdata/conformance-2026-known.txt"

const known2026Header = `# Checks of the MCP conformance suite 0.2.0-alpha.12, --requirements 2026-07-28, that pass against
# the go-sdk's everything-server directly but not yet through scratchpad-mcp (HTTP or stdio upstream):
# scenario/check-id, one a line. TestConformance2026ThroughProxy fails for a check that does worse
# through the proxy and is not listed, and for a listed check that now passes through the proxy on
# every upstream transport (remove it): each change that serves more of 2026-07-28 shrinks this file.
# Regenerate: UPDATE_KNOWN=1 go test -run TestConformance2026ThroughProxy ./e2e/
`

// conformance2026Budget bounds the whole test when go test has no
// deadline: three runs of about 3 s each, plus the builds.
const conformance2026Budget = 4 * time.Minute

// TestConformance2026ThroughProxy is the 2026-07-28 gate: the conformance
// suite's scenarios for that revision (conformance 0.2.0-alpha.12,
// --requirements 2026-07-28: the 37 required ones and 13 run unscored)
// against the go-sdk's everything-server directly (stateless streamable
// HTTP), then through scratchpad-mcp served over streamable HTTP with that
// server as its upstream over streamable HTTP and over stdio. A check that
// passes directly must pass through the proxy, unless it is listed in
// testdata/conformance-2026-known.txt; a listed check that passes through
// the proxy on both upstreams fails the test until it is removed from the
// list. UPDATE_KNOWN=1 rewrites the list from this run instead.
//
// SCRATCHPAD_BIN, when set, is the scratchpad-mcp binary to test instead of
// one built from this checkout.
func TestConformance2026ThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node, npm packages and the go-sdk's conformance server)")
	}
	node, ctx, deadline := conformanceRun(t, conformance2026Budget)
	update, _ := strconv.ParseBool(os.Getenv("UPDATE_KNOWN"))
	known := readKnown(t, known2026)

	bin := scratchpadBin(t)
	es := buildEverythingServer(ctx, t)
	required, scenarios := requirements2026(t)
	c := &conformance{
		node:      node,
		entry:     conformance2026Entry,
		scenarios: scenarios,
		whole:     []string{"--requirements", "2026-07-28"},
		// One scenario at the revision's wire version; --force for the
		// extension scenarios, which are on no spec timeline.
		single: func(s string) []string { return []string{"--scenario", s, "--spec-version", "2026-07-28", "--force"} },
	}

	started := time.Now()
	direct := c.run(ctx, t, startEverythingHTTP(t, es))
	if passed, _, _ := direct.score(direct); passed == 0 {
		t.Fatalf("no conformance check passed against the everything-server directly: the comparison proves nothing\n%s", direct.summary())
	}
	for _, r := range direct.sorted() {
		if gradedStatus(r.Status) && r.Status != "SUCCESS" && !strings.HasPrefix(r.Scenario, "tasks-") {
			t.Logf("directly: %s %s (not counted against the proxy): %s", r.key(), r.Status, r.message())
		}
	}
	for s, why := range direct.broken {
		t.Logf("directly: scenario %s left no results (not counted against the proxy): %s", s, why)
	}
	totals := []string{fmt.Sprintf("direct %s, required scenarios %s (%v)", direct.total(direct), requiredPassed(direct, required), time.Since(started).Round(100*time.Millisecond))}

	mem := t.TempDir()
	upstreams := []struct{ name, section string }{
		{"http upstream", fmt.Sprintf("transport = \"http_streamable\"\nurl = %q\n", startEverythingHTTP(t, es))},
		{"stdio upstream", fmt.Sprintf("transport = \"stdio\"\ncmd = [%q]\n", es)},
	}
	// worseAnywhere: the checks that did worse through the proxy on some
	// upstream; judged: those that passed directly (a listed check that
	// flaked directly says nothing about the proxy).
	worseAnywhere := map[string]bool{}
	for i, up := range upstreams {
		t.Run(strings.ReplaceAll(up.name, " ", "_"), func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
			conf := fmt.Sprintf("memory_dir = %q\n\n[mcp.servers.everything]\n%s", filepath.Join(mem, fmt.Sprint(i)), up.section)
			if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(upstreams)-i))
			defer cancel()
			url := startHTTP(t, bin, cfg, "http") + "/mcp"
			waitForTool(t, url, "test_simple_text")
			started := time.Now()
			via := c.run(ctx, t, url)
			totals = append(totals, fmt.Sprintf("via %s %s, required scenarios %s (%v)", up.name, via.total(direct), requiredPassed(via, required), time.Since(started).Round(100*time.Millisecond)))
			for _, d := range direct.sorted() {
				if worse(d, via.checks[d.key()]) {
					worseAnywhere[d.key()] = true
				}
			}
			if update {
				return
			}
			if diff := compareConformance(direct, via, func(k string) bool { return known[k] }); diff != "" {
				t.Errorf("checks that do worse through scratchpad-mcp (%s) than against the everything-server directly, not in %s:\n%s", up.name, known2026, diff)
			}
			for _, r := range via.sorted() {
				if d := direct.checks[r.key()]; r.Status == "SUCCESS" && (d == nil || d.Status != "SUCCESS") {
					t.Logf("passes through the proxy only: %s (directly %s)", r.key(), statusOf(d))
				}
			}
		})
	}
	t.Logf("conformance 2026-07-28 totals (checks passed / checks graded, not INFO, in the direct run or this one): %s", strings.Join(totals, "; "))

	stale, unjudged := judgeKnown(known, direct, worseAnywhere)
	if len(unjudged) > 0 {
		t.Logf("listed in %s but not passing directly in this run (kept, not judged): %s", known2026, strings.Join(unjudged, ", "))
	}
	if update {
		keep := map[string]bool{}
		for k := range worseAnywhere {
			keep[k] = true
		}
		for _, k := range unjudged {
			keep[k] = true
		}
		writeKnown(t, known2026, keep)
		t.Logf("UPDATE_KNOWN: wrote %s: %d checks (was %d)", known2026, len(keep), len(known))
		return
	}
	if len(stale) > 0 {
		t.Errorf("%d checks listed in %s now pass through scratchpad-mcp on every upstream (or are no check the suite reports): remove it from the known list (or run with UPDATE_KNOWN=1):\n%s",
			len(stale), known2026, strings.Join(stale, "\n"))
	}
	t.Logf("%s: %d checks still do worse through the proxy, %d not judged", known2026, len(known)-len(stale)-len(unjudged), len(unjudged))
}

// judgeKnown sorts the listed checks that need no listing any more
// (stale: they passed directly and did no worse through the proxy on any
// upstream, or the suite reports no such check) from those this run cannot
// judge (they did not pass directly: a flake of the direct run says nothing
// about the proxy). Both come back sorted; the rest are still needed.
func judgeKnown(known map[string]bool, direct *conformanceResults, worseAnywhere map[string]bool) (stale, unjudged []string) {
	for k := range known {
		switch d := direct.checks[k]; {
		case worseAnywhere[k]:
		case d == nil:
			stale = append(stale, k)
		case d.Status != "SUCCESS" && d.Status != "WARNING":
			unjudged = append(unjudged, k)
		default:
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	sort.Strings(unjudged)
	return stale, unjudged
}

// requirements2026 reads the suite's requirements file: the server
// scenarios 2026-07-28 requires, and every server scenario
// --requirements runs (those and the not_scored ones), in its order.
func requirements2026(t *testing.T) (required map[string]bool, all []string) {
	t.Helper()
	b := mustRead(t, conformance2026Requirements)
	required = map[string]bool{}
	section := ""
	var notScored string // the scenario of the not_scored entry being read
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			section = strings.TrimSuffix(strings.TrimSpace(line), ":")
			continue
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case section == "server" && strings.HasPrefix(trimmed, "- "):
			s := strings.TrimSpace(strings.TrimPrefix(trimmed, "- "))
			required[s] = true
			all = append(all, s)
		case section == "not_scored" && strings.HasPrefix(trimmed, "- scenario:"):
			notScored = strings.TrimSpace(strings.TrimPrefix(trimmed, "- scenario:"))
		case section == "not_scored" && trimmed == "leg: server" && notScored != "":
			all = append(all, notScored)
			notScored = ""
		}
	}
	if len(required) < 30 || len(all) <= len(required) {
		t.Fatalf("%s: read %d required and %d server scenarios in all: not the file this test knows", conformance2026Requirements, len(required), len(all))
	}
	return required, all
}

// requiredPassed is "passed/required": the required scenarios that ran and
// have no FAILURE among their checks (a WARNING passes, as the suite
// counts them).
func requiredPassed(res *conformanceResults, required map[string]bool) string {
	failed := map[string]bool{}
	for _, r := range res.checks {
		if r.Status == "FAILURE" {
			failed[r.Scenario] = true
		}
	}
	passed := 0
	for s := range required {
		if res.ran[s] && !failed[s] {
			passed++
		}
	}
	return fmt.Sprintf("%d/%d", passed, len(required))
}

// readKnown reads a known-list file: one scenario/check-id a line, # starts
// a comment. A missing file is an empty list.
func readKnown(t *testing.T, path string) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return known
	} else if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") || !strings.Contains(line, "/") {
			t.Fatalf("%s:%d: want scenario/check-id, got %q", path, n, line)
		}
		if known[line] {
			t.Fatalf("%s:%d: %s listed twice", path, n, line)
		}
		known[line] = true
	}
	return known
}

// writeKnown writes keys, sorted, under known2026Header.
func writeKnown(t *testing.T, path string, keys map[string]bool) {
	t.Helper()
	list := make([]string, 0, len(keys))
	for k := range keys {
		list = append(list, k)
	}
	sort.Strings(list)
	var b strings.Builder
	b.WriteString(known2026Header)
	for _, k := range list {
		b.WriteString(k + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestJudgeKnown covers the known list's rules without running the suite.
func TestJudgeKnown(t *testing.T) {
	direct := &conformanceResults{checks: map[string]*checkResult{}}
	for k, status := range map[string]string{
		"a/passes": "SUCCESS", "a/warns": "WARNING", "a/fails": "FAILURE", "a/still-worse": "SUCCESS",
	} {
		scenario, id, _ := strings.Cut(k, "/")
		direct.checks[k] = &checkResult{Scenario: scenario, ID: id, Status: status}
	}
	worseAnywhere := map[string]bool{"a/still-worse": true}
	tests := []struct {
		name            string
		known           []string
		stale, unjudged []string
	}{
		{"still needed", []string{"a/still-worse"}, nil, nil},
		{"passes now", []string{"a/passes", "a/still-worse"}, []string{"a/passes"}, nil},
		{"warns directly and no worse through the proxy", []string{"a/warns"}, []string{"a/warns"}, nil},
		{"failed directly this time", []string{"a/fails"}, nil, []string{"a/fails"}},
		{"no such check", []string{"b/gone"}, []string{"b/gone"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			known := map[string]bool{}
			for _, k := range tt.known {
				known[k] = true
			}
			stale, unjudged := judgeKnown(known, direct, worseAnywhere)
			if !slices.Equal(stale, tt.stale) || !slices.Equal(unjudged, tt.unjudged) {
				t.Errorf("stale %v, unjudged %v; want %v, %v", stale, unjudged, tt.stale, tt.unjudged)
			}
		})
	}
}
