package explore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The tests below ask questions of fixtures shaped like what MCP servers
// answer (server-postgres rows, server-filesystem's directory_tree,
// server-memory's knowledge graph) through the tools, as a model asks
// them, and compute the true answer from the fixture with encoding/json,
// never with this package's path engine.

// answer splits a tool's answer into its body, decoded as JSON, and its
// footer; an error answer fails the test.
func answer(t *testing.T, out string, body any) string {
	t.Helper()
	if code := errCode(out); code != "" {
		t.Fatalf("error answer: %s", out)
	}
	k := strings.LastIndex(out, "\n--- ")
	if k < 0 {
		t.Fatalf("no footer: %s", out)
	}
	if body != nil {
		if err := json.Unmarshal([]byte(out[:k]), body); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	return out[k+1:]
}

// pgRow is a row of pg_packages.json: bigint columns arrive as strings.
type pgRow struct {
	Package         string `json:"package"`
	Section         string `json:"section"`
	InstalledSizeKB string `json:"installed_size_kb"`
	DownloadKB      string `json:"download_kb"`
}

func TestPostgresRowsNumbersAsText(t *testing.T) {
	env := fixtureEnv(t)
	data, err := os.ReadFile(filepath.Join(fixtures, "pg_packages.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []pgRow
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	size := func(r pgRow) int {
		n, err := strconv.Atoi(r.InstalledSizeKB)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	const note = "installed_size_kb: numbers as text, compared as numbers"

	t.Run("biggest first", func(t *testing.T) {
		want := slices.Clone(rows)
		sort.SliceStable(want, func(i, j int) bool { return size(want[i]) > size(want[j]) })
		var got []map[string]any
		foot := answer(t, run(t, env, ToolIterateOver, map[string]any{"file": "pg_packages.json", "path": "$", "fields": "package,installed_size_kb",
			"sort_by": "installed_size_kb", "order": "desc", "limit": 11}), &got)
		for i, r := range got {
			if r["package"] != want[i].Package {
				t.Errorf("row %d: %v, want %s (%s)", i, r, want[i].Package, want[i].InstalledSizeKB)
			}
		}
		if !strings.Contains(foot, note) {
			t.Errorf("footer does not say the numbers arrived as text: %s", foot)
		}
	})

	t.Run("filter compares the number", func(t *testing.T) {
		var want []string
		for _, r := range rows {
			if size(r) > 100000 {
				want = append(want, r.Package)
			}
		}
		if len(want) != 11 {
			t.Fatalf("fixture: %d rows over 100000, want 11", len(want))
		}
		for _, args := range []map[string]any{
			{"path": "$", "filter": "?(@.installed_size_kb > 100000)"},
			{"path": "$[?@.installed_size_kb > 100000]"},
			{"path": "$[?100000 < @.installed_size_kb && @.package != '']"},
		} {
			args["file"], args["fields"] = "pg_packages.json", "package"
			var got []map[string]any
			foot := answer(t, run(t, env, ToolIterateOver, args), &got)
			var names []string
			for _, r := range got {
				names = append(names, r["package"].(string))
			}
			if !slices.Equal(names, want) || !strings.Contains(foot, note) {
				t.Errorf("%v: %v\n%s\nwant %v", args, names, foot, want)
			}
		}
		// A path that goes on past the filter: the names of the rows.
		var names []string
		foot := answer(t, run(t, env, ToolGetIn, map[string]any{"file": "pg_packages.json", "path": "$[?@.installed_size_kb >= 100000].package"}), &names)
		if !slices.Equal(names, want) || !strings.Contains(foot, note) {
			t.Errorf("get_in: %v\n%s\nwant %v", names, foot, want)
		}
		// Compared with a string, it is a string.
		var exact []string
		answer(t, run(t, env, ToolGetIn, map[string]any{"file": "pg_packages.json", "path": "$[?@.installed_size_kb == '993'].package"}), &exact)
		if !slices.Equal(exact, []string{"gpgsm"}) {
			t.Errorf("== '993': %v, want [gpgsm]", exact)
		}
	})

	t.Run("count_by stats", func(t *testing.T) {
		lo, hi, sum := 1<<62, 0, 0
		for _, r := range rows {
			n := size(r)
			lo, hi, sum = min(lo, n), max(hi, n), sum+n
		}
		var got []map[string]any
		foot := answer(t, run(t, env, ToolCountBy, map[string]any{"file": "pg_packages.json", "path": "$", "distinct": "installed_size_kb", "top": 1}), &got)
		st, _ := got[len(got)-1]["stats"].(map[string]any)
		if st == nil || st["min"] != float64(lo) || st["max"] != float64(hi) || st["sum"] != float64(sum) || st["numbers"] != float64(len(rows)) {
			t.Errorf("stats %v, want min %d max %d sum %d over %d", st, lo, hi, sum, len(rows))
		}
		if !strings.Contains(foot, note) {
			t.Errorf("footer: %s", foot)
		}
		// Per section: the sum of each section's sizes.
		sums := map[string]int{}
		for _, r := range rows {
			sums[r.Section] += size(r)
		}
		answer(t, run(t, env, ToolCountBy, map[string]any{"file": "pg_packages.json", "path": "$", "group_by": "section", "distinct": "installed_size_kb", "top": 100}), &got)
		for _, g := range got {
			if sec, ok := g["section"].(string); ok && g["sum"] != float64(sums[sec]) {
				t.Errorf("section %s: sum %v, want %d", sec, g["sum"], sums[sec])
			}
		}
	})

	t.Run("a mixed field as the RFC says", func(t *testing.T) {
		mixed := 0
		for _, r := range rows {
			if _, err := strconv.Atoi(r.DownloadKB); err != nil {
				mixed++
			}
		}
		if mixed == 0 {
			t.Fatal("fixture: download_kb has no value that is not a number")
		}
		var got []map[string]any
		foot := answer(t, run(t, env, ToolCountBy, map[string]any{"file": "pg_packages.json", "path": "$", "filter": "?(@.download_kb > 1)"}), &got)
		if got[0]["count"] != float64(0) || !strings.Contains(foot, "download_kb: numbers as text mixed with other values, compared as RFC 9535 says") {
			t.Errorf("mixed field: %v %s", got, foot)
		}
		foot = answer(t, run(t, env, ToolIterateOver, map[string]any{"file": "pg_packages.json", "path": "$", "fields": "package", "sort_by": "download_kb", "limit": 1}), nil)
		if !strings.Contains(foot, "download_kb: numbers as text mixed with other values, sorted as written") {
			t.Errorf("mixed sort: %s", foot)
		}
	})

	t.Run("item_schema says numeric", func(t *testing.T) {
		out := run(t, env, ToolItemSchema, map[string]any{"file": "pg_packages.json", "path": "$"})
		if !regexp.MustCompile(`(?m)^installed_size_kb +string \(numeric\) +300/300$`).MatchString(out) {
			t.Errorf("item_schema:\n%s", out)
		}
	})
}

// treeNode is an entry of dir_tree.json, as directory_tree answers.
type treeNode struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Children []*treeNode `json:"children"`
}

// walkTree calls fn with every entry and its depth (1 for the top).
func walkTree(nodes []*treeNode, depth int, fn func(n *treeNode, depth int)) {
	for _, n := range nodes {
		fn(n, depth)
		walkTree(n.Children, depth+1, fn)
	}
}

func TestDirectoryTree(t *testing.T) {
	env := fixtureEnv(t)
	data, err := os.ReadFile(filepath.Join(fixtures, "dir_tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tree []*treeNode
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	count := func(args map[string]any) int {
		t.Helper()
		args["file"] = "dir_tree.json"
		var got []map[string]any
		answer(t, run(t, env, ToolCountBy, args), &got)
		return int(got[0]["count"].(float64))
	}

	files, goFiles, tests, emptyDirs, deepest := 0, 0, 0, []string{}, 0
	byDepth := map[int]int{}
	walkTree(tree, 1, func(n *treeNode, d int) {
		byDepth[d]++
		deepest = max(deepest, d)
		switch {
		case n.Type == "file":
			files++
			if strings.HasSuffix(n.Name, ".go") {
				goFiles++
			}
			if strings.HasSuffix(n.Name, "_test.go") {
				tests++
			}
		case len(n.Children) == 0:
			emptyDirs = append(emptyDirs, n.Name)
		}
	})

	if got := count(map[string]any{"path": "$..[?@.type == 'file']"}); got != files {
		t.Errorf("files at any depth: %d, want %d", got, files)
	}
	if got := count(map[string]any{"path": "$..[?@.type == 'file' && search(@.name, '[.]go$')]"}); got != goFiles {
		t.Errorf(".go files: %d, want %d", got, goFiles)
	}
	if got := count(map[string]any{"path": "$..*", "filter": `?(match(@.name, '.*_test\\.go'))`}); got != tests {
		t.Errorf("test files: %d, want %d", got, tests)
	}
	var empty []string
	answer(t, run(t, env, ToolGetIn, map[string]any{"file": "dir_tree.json", "path": "$..[?@.type == 'directory' && length(@.children) == 0].name"}), &empty)
	if !slices.Equal(empty, emptyDirs) {
		t.Errorf("empty directories: %v, want %v", empty, emptyDirs)
	}
	// By depth: the entries d levels down are $[*] then children[*] d-1 times.
	for d := 1; d <= deepest; d++ {
		p := "$[*]" + strings.Repeat(".children[*]", d-1)
		if got := count(map[string]any{"path": p}); got != byDepth[d] {
			t.Errorf("depth %d (%s): %d entries, want %d", d, p, got, byDepth[d])
		}
	}
	// Grouped by type, at every depth below the top.
	var groups []map[string]any
	answer(t, run(t, env, ToolCountBy, map[string]any{"file": "dir_tree.json", "path": "$..children[*]", "group_by": "type"}), &groups)
	topFiles := 0
	for _, n := range tree {
		if n.Type == "file" {
			topFiles++
		}
	}
	for _, g := range groups {
		if g["type"] == "file" && int(g["count"].(float64)) != files-topFiles {
			t.Errorf("files below the top: %v, want %d", g["count"], files-topFiles)
		}
	}
	// Each row's _path leads back to the entry it shows.
	var rows []map[string]any
	answer(t, run(t, env, ToolIterateOver, map[string]any{"file": "dir_tree.json", "path": "$..[?@.name == 'README.md' || @.name == 'cts.json']", "fields": "name,type"}), &rows)
	if len(rows) == 0 {
		t.Fatal("no README.md in the tree")
	}
	for _, r := range rows {
		var got map[string]any
		answer(t, run(t, env, ToolGetIn, map[string]any{"file": "dir_tree.json", "path": r["_path"]}), &got)
		if got["name"] != r["name"] {
			t.Errorf("%v: get_in %s gives %v", r, r["_path"], got)
		}
	}
}

// graph is memory_graph.json, as server-memory's read_graph answers.
type graph struct {
	Entities []struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	} `json:"entities"`
	Relations []struct {
		From, To, RelationType string
	} `json:"relations"`
}

func TestMemoryGraph(t *testing.T) {
	env := fixtureEnv(t)
	data, err := os.ReadFile(filepath.Join(fixtures, "memory_graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g graph
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	get := func(path string, out any) string {
		t.Helper()
		return answer(t, run(t, env, ToolGetIn, map[string]any{"file": "memory_graph.json", "path": path}), out)
	}

	// A filter in the middle of a path (the example).
	var obs [][]string
	get("$.entities[?@.name=='bash'].observations", &obs)
	for _, e := range g.Entities {
		if e.Name == "bash" && (len(obs) != 1 || !slices.Equal(obs[0], e.Observations)) {
			t.Errorf("bash's observations: %v, want [%v]", obs, e.Observations)
		}
	}
	// What bash uses, and who depends on it.
	var uses, users []string
	get("$.relations[?@.from == 'bash' && @.relationType == 'uses'].to", &uses)
	get("$.relations[?@.to == 'bash'].from", &users)
	var wantUses, wantUsers []string
	for _, r := range g.Relations {
		if r.From == "bash" && r.RelationType == "uses" {
			wantUses = append(wantUses, r.To)
		}
		if r.To == "bash" {
			wantUsers = append(wantUsers, r.From)
		}
	}
	if !slices.Equal(uses, wantUses) || !slices.Equal(users, wantUsers) {
		t.Errorf("uses %v (want %v), used by %v (want %v)", uses, wantUses, users, wantUsers)
	}
	// Entities by type, and those with more than three observations.
	byType := map[string]int{}
	many := 0
	for _, e := range g.Entities {
		byType[e.EntityType]++
		if len(e.Observations) > 3 {
			many++
		}
	}
	var groups []map[string]any
	answer(t, run(t, env, ToolCountBy, map[string]any{"file": "memory_graph.json", "path": "$.entities", "group_by": "entityType", "top": 50}), &groups)
	got := map[string]int{}
	for _, gr := range groups {
		got[gr["entityType"].(string)] = int(gr["count"].(float64))
	}
	if !reflect.DeepEqual(got, byType) {
		t.Errorf("by type %v, want %v", got, byType)
	}
	var n []map[string]any
	answer(t, run(t, env, ToolCountBy, map[string]any{"file": "memory_graph.json", "path": "$.entities[?length(@.observations) > 3]"}), &n)
	if int(n[0]["count"].(float64)) != many {
		t.Errorf("entities with more than 3 observations: %v, want %d", n, many)
	}
	// Unions and slices: the first and last relation's ends, the last three entities.
	var ends []string
	get("$.relations[0,-1]['from','to']", &ends)
	first, last := g.Relations[0], g.Relations[len(g.Relations)-1]
	if want := []string{first.From, first.To, last.From, last.To}; !slices.Equal(ends, want) {
		t.Errorf("union: %v, want %v", ends, want)
	}
	var tail []string
	get("$.entities[-3:].name", &tail)
	var wantTail []string
	for _, e := range g.Entities[len(g.Entities)-3:] {
		wantTail = append(wantTail, e.Name)
	}
	if !slices.Equal(tail, wantTail) {
		t.Errorf("slice: %v, want %v", tail, wantTail)
	}
	// Every observation that mentions build-01, wherever it is.
	var mentions []string
	get("$..observations[?search(@, 'build-01')]", &mentions)
	var wantMentions []string
	for _, e := range g.Entities {
		for _, o := range e.Observations {
			if strings.Contains(o, "build-01") {
				wantMentions = append(wantMentions, o)
			}
		}
	}
	if !slices.Equal(mentions, wantMentions) {
		t.Errorf("mentions: %d, want %d", len(mentions), len(wantMentions))
	}
}
