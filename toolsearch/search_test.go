package toolsearch

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestClosest(t *testing.T) {
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	tests := []struct {
		name     string
		first    string // the expected first suggestion; "" for none at all
		anywhere bool   // first may be any of the three
	}{
		{"github__list_issue", "github__list_issues", false},              // typo
		{"GITHUB__LIST_ISSUES", "github__list_issues", false},             // case
		{"list_isues", "github__list_issues", false},                      // no prefix, typo
		{"github_list_issues", "github__list_issues", false},              // one underscore
		{"gh__list_issues", "github__list_issues", false},                 // wrong prefix
		{"k8s__pod_logs", "k8s__pods_log", false},                         // word order and number
		{"slack_post_message", "slack__slack_post_message", false},        // the server's own name
		{"create_ticket", "github__create_issue", false},                  // a synonym
		{"jira__create_issue", "jira__jira_create_issue", false},          // prefix said once
		{"stripe__refund_charge", "stripe__create_refund", true},          // said otherwise: retrieve_charge is nearer by edits
		{"grafana__query_promethues", "grafana__query_prometheus", false}, // transposition
		{"zzzz", "", false},
	}
	for _, tt := range tests {
		got := ix.Closest(tt.name, 3)
		if tt.first == "" {
			if len(got) != 0 {
				t.Errorf("Closest(%q) = %v, want none", tt.name, got)
			}
			continue
		}
		if tt.anywhere && slices.Contains(got, tt.first) {
			continue
		}
		if len(got) == 0 || got[0] != tt.first {
			t.Errorf("Closest(%q) = %v, want %s first", tt.name, got, tt.first)
		}
		if len(got) > 3 {
			t.Errorf("Closest(%q) = %v, more than 3", tt.name, got)
		}
	}
	if got := ix.Closest("github__list_issue", 0); got != nil {
		t.Errorf("Closest(n=0) = %v", got)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3},
		{"kitten", "sitting", 3}, {"list_issues", "list_isseus", 1}, {"ab", "ba", 1},
		{"same", "same", 0}, {"abc", "xyz", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, 1000); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := editDistance("kitten", "sitting", 1); got <= 1 {
		t.Errorf("editDistance with limit 1 = %d, want > 1", got)
	}
	long := strings.Repeat("a", 500)
	if got := editDistance(long, long+"b", 1000); got != 0 {
		t.Errorf("long names compare on their first 128 bytes: got %d", got)
	}
}

func TestSearch(t *testing.T) {
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	tests := []struct {
		name  string
		query string
		limit int
		want  []string // the first hits, in order
		n     int      // the number of hits; -1 to skip
	}{
		{"exact name first", "github__list_issues", 3, []string{"github__list_issues"}, 3},
		{"exact name, case", "GitHub__List_Issues", 1, []string{"github__list_issues"}, 1},
		{"own words", "scale deployment replicas", 5, []string{"k8s__deployment_scale"}, -1},
		{"server word", "jira comment", 2, []string{"jira__jira_add_comment"}, -1},
		{"synonym: ticket is an issue", "open a jira ticket", 3, []string{"jira__jira_create_issue"}, -1},
		{"phrase: pull request", "merge this pull request", 1, []string{"github__merge_pull_request"}, 1},
		{"default limit", "list", 0, nil, DefaultLimit},
		{"capped limit", "list", 1000, nil, -1},
		{"stop words only", "what is the", 5, nil, 0},
		{"empty", "", 5, nil, 0},
		{"unknown words", "qwertyuiop zxcvb", 5, nil, 0},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.query, tt.limit)
		if tt.n >= 0 && len(hits) != tt.n {
			t.Errorf("%s: Search(%q, %d) gave %d hits, want %d", tt.name, tt.query, tt.limit, len(hits), tt.n)
		}
		if len(hits) > MaxLimit {
			t.Errorf("%s: %d hits, over MaxLimit", tt.name, len(hits))
		}
		for i, w := range tt.want {
			if i >= len(hits) || hits[i].Name != w {
				t.Errorf("%s: Search(%q) = %v, want %v first", tt.name, tt.query, names(hits), tt.want)
				break
			}
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%s: hits not in score order: %v", tt.name, hits)
			}
		}
		for _, h := range hits {
			if tools[h.Tool].Name != h.Name {
				t.Errorf("%s: hit %v names tool %d %q", tt.name, h, h.Tool, tools[h.Tool].Name)
			}
		}
	}
}

func names(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Name)
	}
	return out
}

// TestSearchDeterministic: equal scores answer in catalogue order, and
// concurrent searches (pooled scratch) answer as one alone does.
func TestSearchDeterministic(t *testing.T) {
	tools := []Tool{
		{Name: "a__ping", Description: "Ping."},
		{Name: "b__ping", Description: "Ping."},
		{Name: "c__ping", Description: "Ping."},
	}
	ix := NewIndex(tools)
	if got := names(ix.Search("ping", 3)); !slices.Equal(got, []string{"a__ping", "b__ping", "c__ping"}) {
		t.Errorf("ties: %v", got)
	}
	cat, _ := loadCatalogue(t)
	big := NewIndex(cat)
	qs := loadQueries(t)
	want := make([][]string, len(qs))
	for i, q := range qs {
		want[i] = names(big.Search(q.Query, 5))
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i, q := range qs {
				if got := names(big.Search(q.Query, 5)); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent %q: %v, alone %v", q.Query, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

func TestNewIndexEdgeCases(t *testing.T) {
	for _, tools := range [][]Tool{
		nil,
		{{}},
		{{Name: "x", InputSchema: json.RawMessage(`{"properties":`)}},
		{{Name: "dup"}, {Name: "dup", Description: "second"}},
	} {
		ix := NewIndex(tools)
		_ = ix.Search("x dup second", 5)
		_ = ix.Closest("x", 2)
		_ = ix.Format(ix.Search("dup", 5))
	}
	ix := NewIndex([]Tool{{Name: "dup"}, {Name: "dup", Description: "second"}})
	if i, ok := ix.Lookup("DUP"); !ok || i != 0 {
		t.Errorf("Lookup of a name listed twice: %d %v, want the first", i, ok)
	}
	if got := ix.Format([]Hit{{Tool: 7}, {Tool: -1}}); got != "" {
		t.Errorf("Format of hits out of range: %q", got)
	}
}

func TestFormat(t *testing.T) {
	tools := []Tool{{
		Name:        "github__list_issues",
		Server:      "github",
		Description: "List issues in a GitHub repository.\n\nMore details here.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"state":{"type":"string","enum":["open","closed","all"]}},"required":["owner","repo"]}`),
	}, {
		Name:        "wide",
		InputSchema: json.RawMessage(`{"type":"object","required":["id"],"properties":{"id":{"type":"string"},` + strings.Repeat(`"a_fairly_long_argument_name_00":{"type":"string"},`, 0) + manyProps(12) + `}}`),
	}}
	ix := NewIndex(tools)
	got := ix.Format([]Hit{{Tool: 0}, {Tool: 1}})
	want := `github__list_issues(owner: string, repo: string, state?: "open"|"closed"|"all") — List issues in a GitHub repository.
wide(id: string, a_fairly_long_argument_00?: string, a_fairly_long_argument_01?: string, a_fairly_long_argument_02?: string, a_fairly_long_argument_03?: string, …+8 more)
`
	if got != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
}

func manyProps(n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, `"a_fairly_long_argument_`+string(rune('0'+i/10))+string(rune('0'+i%10))+`":{"type":"string"}`)
	}
	return strings.Join(parts, ",")
}

// TestLongQueryReadOnlyItsHead: a 3 MB query (or name) is read for its
// first MaxQueryBytes bytes, where its counting words are, not split
// whole into words; it answers what its head answers.
func TestLongQueryReadOnlyItsHead(t *testing.T) {
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	q := "list open issues " + strings.Repeat("zebra ", 3<<20/6)
	want := ix.Search("list open issues", 5)
	ix.Search(q, 5) // the scratch buffers, once
	name := "github__list_issue" + strings.Repeat("s", 3<<20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := ix.Search(q, 5)
	close := ix.Closest(name, 3)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("a 3 MB query and a 3 MB name allocated %d KB", n>>10)
	}
	if len(got) == 0 || got[0].Name != want[0].Name {
		t.Errorf("Search(3 MB query) = %v, want %v first", got, want[0].Name)
	}
	if len(close) == 0 {
		t.Errorf("Closest(3 MB name) = none")
	}
}
