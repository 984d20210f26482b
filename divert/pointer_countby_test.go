package divert

import (
	"fmt"
	"strings"
	"testing"
)

// TestPointerSuggestsCountBy: a listing's pointer offers a count_by on its
// most telling low-cardinality field, ready to run.
func TestPointerSuggestsCountBy(t *testing.T) {
	var items []string
	for i := range 60 {
		items = append(items, fmt.Sprintf(`{"metadata":{"name":"pod-%d","namespace":"ns-%d","uid":"u%d"},"spec":{"nodeName":"node-%d"},"status":{"phase":"%s","restarts":%d}}`,
			i, i%5, i, i%3, []string{"Running", "Failed", "Pending"}[i%3], i%4))
	}
	data := []byte(`{"kind":"PodList","items":[` + strings.Join(items, ",") + `]}`)
	_, calls := describe(Stored{Name: "k8s-list_pods-1.json", Format: FormatJSON}, data)
	want := `count_by {"file":"k8s-list_pods-1.json","path":"$.items","group_by":"status.phase"}`
	if len(calls) != 3 || calls[1] != want {
		t.Errorf("calls:\n%s\nwant the second to be %s", strings.Join(calls, "\n"), want)
	}
	nd := []byte{}
	for i := range 30 {
		nd = append(nd, fmt.Sprintf(`{"ts":"2026-01-01T00:00:%02dZ","level":"%s","msg":"event %d"}`+"\n", i, []string{"info", "warn", "error"}[i%3], i)...)
	}
	_, calls = describe(Stored{Name: "log.ndjson", Format: FormatNDJSON}, nd)
	if want := `count_by {"file":"log.ndjson","path":"$","group_by":"level"}`; len(calls) < 2 || calls[1] != want {
		t.Errorf("NDJSON calls:\n%s\nwant %s", strings.Join(calls, "\n"), want)
	}
	// Unique values only: no count_by.
	_, calls = describe(Stored{Name: "u.json", Format: FormatJSON}, []byte(`[{"id":"a"},{"id":"b"},{"id":"c"},{"id":"d"},{"id":"e"}]`))
	for _, c := range calls {
		if strings.HasPrefix(c, "count_by") {
			t.Errorf("count_by on unique values: %s", c)
		}
	}
}
