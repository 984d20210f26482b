package explore

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// jq runs jq on a fixture and decodes its JSON output. The golden answers
// of the query engine are cross-checked with it.
func jq(t *testing.T, expr, file string) any {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("jq not found: run scripts/deps.sh")
	}
	out, err := exec.Command("jq", "-c", expr, file).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("jq %s: %v: %s", expr, err, ee.Stderr)
		}
		t.Fatalf("jq %s: %v", expr, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("jq output %q: %v", out, err)
	}
	return v
}

func loadFixture(t testing.TB, name string) *doc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return newDoc(name, name, data)
}

func mustItems(t *testing.T, d *doc, path string) items {
	t.Helper()
	q, err := parsePath(path)
	if err != nil {
		t.Fatal(err)
	}
	n, _, miss := d.resolve(segments(q))
	if miss != nil {
		t.Fatalf("%s: not found", path)
	}
	return d.itemsOf(n)
}

func ints(v any) []int {
	var out []int
	for _, x := range v.([]any) {
		out = append(out, int(x.(float64)))
	}
	return out
}

// filterCases pairs each filter with the jq condition selecting the same
// items.
var filterCases = []struct{ filter, jq string }{
	{`?(@.status.phase == 'Failed')`, `.status.phase == "Failed"`},
	{`$[?(@.status.phase == "Failed" || @.status.phase == 'Pending')]`, `.status.phase == "Failed" or .status.phase == "Pending"`},
	{`@.status.restartCount > 3 && @.metadata.namespace != 'default'`, `.status.restartCount > 3 and .metadata.namespace != "default"`},
	{`?(@.metadata.name =~ /^pod-1[0-2]/)`, `.metadata.name | test("^pod-1[0-2]")`},
	{`?(@.metadata.name =~ 'POD-10' )`, `.metadata.name | test("POD-10")`},
	{`?(@.metadata.name =~ /POD-10/i)`, `.metadata.name | test("POD-10"; "i")`},
	{`?(match(@.spec.nodeName, 'node-[12]'))`, `.spec.nodeName | test("^(?:node-[12])$")`},
	{`?(match(@.spec.nodeName, 'node'))`, `false`},
	{`?(search(@.status.message, 'OOM'))`, `(.status.message | type) == "string" and (.status.message | test("OOM"))`},
	{`?(length(@.spec.containers) > 1)`, `(.spec.containers | length) > 1`},
	{`?(length(@.metadata.name) == 8)`, `(.metadata.name | length) == 8`},
	{`?(count(@.spec.containers[*]) == 2)`, `(.spec.containers | length) == 2`},
	{`?(@.spec.containers[?(@.image == 'busybox')])`, `any(.spec.containers[]; .image == "busybox")`},
	{`?(@.status.reason)`, `.status | has("reason")`},
	{`?(@.status.reason == null)`, `.status | has("reason")`},
	{`?(!@.status.restartCount)`, `.status | has("restartCount") | not`},
	{`?(@.metadata.labels['app.kubernetes.io/name'] == 'db')`, `.metadata.labels["app.kubernetes.io/name"] == "db"`},
	{`?(@.metadata.labels.tier == 1)`, `.metadata.labels.tier == 1`},
	{`?(@.metadata.labels.tier < 'c')`, `(.metadata.labels.tier | type) == "string" and .metadata.labels.tier < "c"`},
	{`?(@.spec.priority >= 100)`, `.spec.priority >= 100`},
	{`?(@.spec.priority == 2.5 || @.spec.priority == 1e3)`, `.spec.priority == 2.5 or .spec.priority == 1000`},
	{`?(@.status.phase in ['Failed', 'Succeeded'])`, `.status.phase == "Failed" or .status.phase == "Succeeded"`},
	{`?(@..[?@.restartCount > 2])`, `[.. | objects | select(has("restartCount")) | .restartCount] | any(. > 2)`},
	{`?(@.status.containerStatuses[?@.ready == true])`, `any(.status.containerStatuses[]?; .ready == true)`},
	{`?(@.spec.containers[-1:][?@ == 'nginx:1.25'])`, `any(.spec.containers[-1][]; . == "nginx:1.25")`},
	{`?(count(@.spec.containers[0, -1]) == 2)`, `(.spec.containers | length) >= 1`},
	{`?(@.metadata['name', 'namespace'])`, `.metadata | has("name") or has("namespace")`},
	{`?(@.status.containerStatuses[-1].restartCount == 3)`, `.status.containerStatuses[-1].restartCount == 3`},
	{`?(@.status.phase <= 'Pending')`, `.status.phase <= "Pending"`},
	{`?(@.kind == 'Pod' && $.kind == 'PodList')`, `.kind == "Pod"`},
	{`?(@.kind == $.items[0].kind && @.spec.containers[0].name == 'main')`, `true`},
	{`?(@.status.message == 'back-off "restarting" container\n(exit 137) — OOMKilled')`, `.status.message == "back-off \"restarting\" container\n(exit 137) — OOMKilled"`},
	{`?(!(@.status.phase == 'Running') && !(@.spec.priority < 1000))`, `(.status.phase == "Running" | not) and (.spec.priority < 1000 | not)`},
	{`?(@.spec.containers == @.spec.containers && @.metadata != @.spec)`, `true`},
	{`?(value(@..image) == 'nginx:1.25')`, `[.. | objects | .image? | strings] == ["nginx:1.25"]`},
	{`?(@.nope == @.nothing)`, `true`},
	{`?(@.nope != 1 && !(@.nope < 1) && !(@.nope >= 1))`, `true`},
}

func TestFilterMatchesJQ(t *testing.T) {
	d := loadFixture(t, "pods.json")
	it := mustItems(t, d, "items")
	for _, tc := range filterCases {
		f, err := parseFilter(tc.filter)
		if err != nil {
			t.Errorf("%s: %v", tc.filter, err)
			continue
		}
		got, err := selectItems(context.Background(), it, f)
		if err != nil {
			t.Fatal(err)
		}
		want := ints(jq(t, `[.items | to_entries[] | select(.value | `+tc.jq+`) | .key]`, filepath.Join(fixtures, "pods.json")))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n got %v\nwant %v (jq: %s)", tc.filter, got, want, tc.jq)
		}
	}
}

func TestSortMatchesJQ(t *testing.T) {
	d := loadFixture(t, "pods.json")
	it := mustItems(t, d, "items")
	all, _ := selectItems(context.Background(), it, nil)
	for field, jqf := range map[string]string{
		"status.restartCount":      ".status.restartCount",
		"metadata.labels.tier":     ".metadata.labels.tier",
		"spec.priority":            ".spec.priority",
		"status.reason":            ".status.reason",
		"spec.containers[*].image": ".spec.containers[0].image",
	} {
		q, err := parseField(field)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := sortItems(context.Background(), it, all, q, false)
		if err != nil {
			t.Fatal(err)
		}
		want := ints(jq(t, `[.items | to_entries | sort_by(.value | `+jqf+`) | .[].key]`, filepath.Join(fixtures, "pods.json")))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("sort_by %s\n got %v\nwant %v", field, got, want)
		}
		desc, _, _ := sortItems(context.Background(), it, all, q, true)
		e := newEvaluator(d)
		for i := 1; i < len(desc); i++ {
			a, _ := it.at(desc[i-1])
			b, _ := it.at(desc[i])
			av, aok := e.fieldValue(q, a)
			bv, bok := e.fieldValue(q, b)
			if c := cmpSortKey(makeSortKey(d.data, av, aok, 0), makeSortKey(d.data, bv, bok, 0)); c < 0 || c == 0 && desc[i-1] > desc[i] {
				t.Errorf("sort_by %s desc: %d before %d", field, desc[i-1], desc[i])
			}
		}
	}
}

// groupCounts renders an aggregation as {key: count} with keys as the
// compact JSON of the group's values joined by "|".
func groupCounts(r *aggResult) map[string]int {
	out := map[string]int{}
	for k, g := range r.groups {
		out[strings.ReplaceAll(k, "\x00", "|")] = g.count
	}
	return out
}

func jqCounts(t *testing.T, expr string) map[string]int {
	out := map[string]int{}
	for _, p := range jq(t, expr, filepath.Join(fixtures, "pods.json")).([]any) {
		pair := p.([]any)
		out[pair[0].(string)] = int(pair[1].(float64))
	}
	return out
}

func TestAggregateMatchesJQ(t *testing.T) {
	d := loadFixture(t, "pods.json")
	it := mustItems(t, d, "items")
	agg := func(filter string, groups []string, distinct string) *aggResult {
		t.Helper()
		var spec aggSpec
		if filter != "" {
			f, err := parseFilter(filter)
			if err != nil {
				t.Fatal(err)
			}
			spec.filter = f
		}
		for _, g := range groups {
			q, err := parseField(g)
			if err != nil {
				t.Fatal(err)
			}
			spec.groups = append(spec.groups, q)
		}
		if distinct != "" {
			q, err := parseField(distinct)
			if err != nil {
				t.Fatal(err)
			}
			spec.distinct = q
		}
		r, err := aggregate(context.Background(), it, spec)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := agg("", []string{"status.phase"}, "")
	if want := jqCounts(t, `[.items[].status.phase | tojson] | group_by(.) | map([.[0], length])`); !reflect.DeepEqual(groupCounts(r), want) {
		t.Errorf("group_by status.phase: %v, want %v", groupCounts(r), want)
	}
	r = agg("@.status.phase != 'Running'", []string{"metadata.namespace", "metadata.labels.tier"}, "")
	if want := jqCounts(t, `[.items[] | select(.status.phase != "Running") | "\(.metadata.namespace|tojson)|\(.metadata.labels.tier|tojson)"] | group_by(.) | map([.[0], length])`); !reflect.DeepEqual(groupCounts(r), want) {
		t.Errorf("group_by namespace,tier with filter: %v, want %v", groupCounts(r), want)
	}
	if r.matched != 19 || r.scanned != 40 {
		t.Errorf("matched %d of %d, want 19 of 40", r.matched, r.scanned)
	}
	r = agg("", nil, "spec.containers[*].image")
	if want := jqCounts(t, `[.items[].spec.containers[].image | tojson] | group_by(.) | map([.[0], length])`); !reflect.DeepEqual(groupCounts(r), want) {
		t.Errorf("distinct image: %v, want %v", groupCounts(r), want)
	}
	r = agg("", []string{"status.restartCount"}, "")
	if want := jqCounts(t, `[.items[].status.restartCount | tojson] | group_by(.) | map([.[0], length])`); !reflect.DeepEqual(groupCounts(r), want) {
		t.Errorf("group_by restartCount: %v, want %v", groupCounts(r), want)
	}
	st := statsOf(r.nums)
	want := jq(t, `[.items[].status.restartCount | numbers] | [min, max, add, add/length, length]`, filepath.Join(fixtures, "pods.json")).([]any)
	if st.min != want[0].(float64) || st.max != want[1].(float64) || st.sum != want[2].(float64) || st.mean != want[3].(float64) || st.n != int(want[4].(float64)) {
		t.Errorf("stats %+v, want %v", st, want)
	}
	// p50/p95 nearest rank, checked with jq's sort.
	pct := jq(t, `[.items[].status.restartCount | numbers] | sort | [.[(length*0.5|ceil)-1], .[(length*0.95|ceil)-1]]`, filepath.Join(fixtures, "pods.json")).([]any)
	if st.p50 != pct[0].(float64) || st.p95 != pct[1].(float64) {
		t.Errorf("p50/p95 %v %v, want %v", st.p50, st.p95, pct)
	}
	// group_by + distinct: distinct images per namespace.
	r = agg("", []string{"metadata.namespace"}, "spec.containers[*].image")
	wantD := jq(t, `.items | group_by(.metadata.namespace) | map({key: (.[0].metadata.namespace|tojson), value: ([.[].spec.containers[].image] | unique | length)}) | from_entries`, filepath.Join(fixtures, "pods.json")).(map[string]any)
	for k, g := range r.groups {
		if len(g.dist) != int(wantD[k].(float64)) {
			t.Errorf("distinct images in %s: %d, want %v", k, len(g.dist), wantD[k])
		}
	}
}

func TestAggregateCardinalityCap(t *testing.T) {
	old := maxGroups
	maxGroups = 100
	defer func() { maxGroups = old }()
	var b strings.Builder
	b.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":` + itoa(i) + `,"k":"` + itoa(i%1000) + `"}`)
	}
	b.WriteString("]")
	d := newDoc("x.json", "x.json", []byte(b.String()))
	q, _ := parseField("k")
	r, err := aggregate(context.Background(), d.itemsOf(d.root()), aggSpec{groups: []*fquery{q}})
	if err != nil {
		t.Fatal(err)
	}
	total := r.untracked
	for _, g := range r.groups {
		total += g.count
	}
	if len(r.groups) > 100 || total != 5000 || r.untracked == 0 {
		t.Errorf("%d groups tracked, %d untracked, total %d; want <= 100 groups and every item counted", len(r.groups), r.untracked, total)
	}
}

func TestFilterDeepAndMixed(t *testing.T) {
	// 10,000 levels of nesting inside each item.
	deep := strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000)
	src := `[{"x":` + deep + `,"n":1},{"x":2,"n":2},{"n":3,"x":[` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `]}]`
	d := newDoc("deep.json", "deep.json", []byte(src))
	if d.jsonErr != "" {
		t.Fatal(d.jsonErr)
	}
	it := d.itemsOf(d.root())
	for filter, want := range map[string][]int{
		`?(@.n >= 2)`:              {1, 2},
		`?(@.x.a.a.a)`:             {0},
		`?(@..[?@.a == 1])`:        {0},
		`?(length(@.x) == 1)`:      {0, 2},
		`?(@.x == 2 || @.x[0][0])`: {1, 2},
	} {
		f, err := parseFilter(filter)
		if err != nil {
			t.Fatal(err)
		}
		got, err := selectItems(context.Background(), it, f)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", filter, got, want)
		}
	}
	// Mixed-type arrays: every comparison is type-aware, none panics.
	mixed := newDoc("m.json", "m.json", []byte(`[1, "1", true, null, [1], {"a": 1}, 1.0, "a\u0062", -0, 1e2, "", {}]`))
	it = mixed.itemsOf(mixed.root())
	for filter, want := range map[string][]int{
		`?(@ == 1)`:          {0, 6},
		`?(@ == '1')`:        {1},
		`?(@ == true)`:       {2},
		`?(@ == null)`:       {3},
		`?(@ > 0)`:           {0, 6, 9},
		`?(@ < 'b')`:         {1, 7, 10},
		`?(@ == 'ab')`:       {7},
		`?(@.a)`:             {5},
		`?(@[0] == 1)`:       {4},
		`?(length(@) == 1)`:  {1, 4, 5},
		`?(length(@) == 0)`:  {10, 11},
		`?(@ == 0)`:          {8},
		`?(@ =~ '^a')`:       {7},
		`?(count(@.*) == 1)`: {4, 5},
	} {
		f, err := parseFilter(filter)
		if err != nil {
			t.Fatal(filter, err)
		}
		got, _ := selectItems(context.Background(), it, f)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("mixed %s: %v, want %v", filter, got, want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	for _, tc := range []struct {
		filter string
		col    int
		msg    string
	}{
		{`?(@.status.phase = 'Failed')`, 18, "equality is =="},
		{`?(@.a == 1 and @.b == 2)`, 12, "use && and ||"},
		{`?(status.phase == 'x')`, 3, "write @.status.phase"},
		{`?(@.a == 'x'`, 2, "'(' is not closed"},
		{`?(@.a == 'x)`, 10, "unterminated string"},
		{`?(@.a =~ /(/)`, 10, "invalid regular expression"},
		{`?(foo(@.a))`, 3, "unknown function foo()"},
		{`?(length(@.a, 1) > 1)`, 15, "takes 1 argument"},
		{`?(match(@.a, 'x') == true)`, 3, "use it alone"},
		{`?(@.a ==)`, 9, "expected a value"},
		{``, 1, "empty filter"},
		{`?(` + strings.Repeat("(", 100) + `@.a` + strings.Repeat(")", 101), 66, "deeper than 64"},
		{`?(@.a == 1) x`, 13, "expected &&, || or the end"},
		{`?(@.é == 1 && @[x] == 2)`, 17, "expected a quoted name, an index"},
		{`?(@.a[*].b == 1)`, 3, "selects several nodes and cannot be compared"},
		{`?(@..b > 1)`, 3, "test whether any matches"},
		{`?(@.a == 01)`, 10, "no leading 0"},
		{`?(length(@.a))`, 3, "compare it"},
		{`?(count(@.a) > 1 && @.kube-system)`, 27, "needs quotes"},
		{`?(@.a == True)`, 10, "write true"},
		{`?(count (@.a) == 1)`, 8, "no space"},
	} {
		_, err := parseFilter(tc.filter)
		var fe *syntaxError
		if !errors.As(err, &fe) {
			t.Errorf("%q: error %v, want a syntaxError", tc.filter, err)
			continue
		}
		if fe.column() != tc.col || !strings.Contains(fe.msg, tc.msg) {
			t.Errorf("%q: column %d %q, want column %d containing %q", tc.filter, fe.column(), fe.msg, tc.col, tc.msg)
		}
	}
}

func FuzzParseFilter(f *testing.F) {
	for _, tc := range filterCases {
		f.Add(tc.filter)
	}
	f.Add(`?(@.a[?(@.b > 1)].c == 'x' || !@..d && count(@.*) in [1, 2])`)
	d := loadFixture(f, "pods.json")
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := parseFilter(s)
		if err != nil {
			var fe *syntaxError
			if !errors.As(err, &fe) || fe.column() < 1 || fe.column() > len([]rune(s))+1 {
				t.Fatalf("%q: bad error %v", s, err)
			}
			return
		}
		// Whatever parses must evaluate without panicking.
		e := newEvaluator(d)
		for _, c := range d.itemsOf(mustRoot(d)).kids[:3] {
			e.match(fl, c.val)
		}
	})
}

func mustRoot(d *doc) node {
	n, _, _ := d.resolve([]segment{{kind: segKey, key: "items"}})
	return n
}

func TestParseField(t *testing.T) {
	for in, want := range map[string]string{
		"status.phase":                    "status.phase",
		"spec.containers[*].image":        "spec.containers[*].image",
		"@.a.b":                           "a.b",
		`metadata.labels["app.k8s.io/x"]`: `metadata.labels["app.k8s.io/x"]`,
		`$["a.b"]`:                        `["a.b"]`,
		`items.3.name`:                    `items.3.name`,
		`a\.b`:                            `["a.b"]`,
		`[0]`:                             `[0]`,
	} {
		q, err := parseField(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := fieldName(q); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

func TestGrepEveryFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "outputs", "pods-1.json"), "{\n  \"name\": \"pod-1234\",\n  \"x\": 1,\n  \"peer\": \"pod-1234\"\n}\n")
	writeFile(t, filepath.Join(dir, "outputs", "app.log"), "start\nPOD-1234 restarted\nok\npod-1234 ready\npod-1234 gone\npod-1234 back\n")
	writeFile(t, filepath.Join(dir, "outputs", "none.txt"), "nothing here\n")
	writeFile(t, filepath.Join(dir, "outputs", ".pods.tmp-1"), "pod-1234\n")
	writeFile(t, filepath.Join(dir, "outputs", "bin.dat"), "pod-1234\x00\x01")
	writeFile(t, filepath.Join(dir, "artifacts", "notes.md"), "# notes\nsee pod-1234\n")
	env := dirEnv(t, dir)
	env.Dir = "outputs"
	got := run(t, env, "grep", map[string]any{"pattern": "pod-1234"})
	want := "../artifacts/notes.md: 1 matching line\n> 2: see pod-1234\n" +
		"app.log: 3 matching lines\n> 4: pod-1234 ready\n> 5: pod-1234 gone\n> 6: pod-1234 back\n" +
		"pods-1.json: 2 matching lines\n> 2:   \"name\": \"pod-1234\",\n> 4:   \"peer\": \"pod-1234\"\n" +
		"--- grep: /pod-1234/ in every stored output (3 with matches of 5 files searched, 6 matching lines; first 3 per file) | ~"
	if !strings.HasPrefix(got, want) {
		t.Errorf("grep without file:\n%s\nwant prefix:\n%s", got, want)
	}
	got = run(t, env, "grep", map[string]any{"pattern": "pod-1234", "ignore_case": true, "max_matches": 1, "context": 1})
	if !strings.Contains(got, "app.log: 4 matching lines\n  1: start\n> 2: POD-1234 restarted\n  3: ok\n") {
		t.Errorf("grep without file, context 1:\n%s", got)
	}
	env.MaxExtractionTokens = 60
	if got := run(t, env, "grep", map[string]any{"pattern": "pod-1234"}); errCode(got) != "grep_too_large" || !strings.Contains(got, `"max_matches":1`) {
		t.Errorf("too large: %s", got)
	}
	for _, c := range []struct{ dir, p, want string }{
		{"", "a/b", "a/b"}, {"out", "out/x", "x"}, {"out", "art/x", "../art/x"}, {"a/b", "a/c/x", "../c/x"}, {"a/b", "z", "../../z"},
	} {
		if got := relFrom(c.dir, c.p); got != c.want {
			t.Errorf("relFrom(%q, %q) = %q, want %q", c.dir, c.p, got, c.want)
		}
	}
}

// TestCountByToolMatchesJQ checks the tool's rendered answer, not just the
// engine, against jq.
func TestCountByToolMatchesJQ(t *testing.T) {
	env := fixtureEnv(t)
	got := run(t, env, "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "metadata.namespace", "filter": "?(@.status.phase == 'Failed' || @.status.restartCount >= 7)", "top": 100})
	body := got[:strings.LastIndex(got, "\n--- ")]
	var rows []map[string]any
	if err := json.Unmarshal([]byte(body), &rows); err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	gotM := map[string]int{}
	for _, r := range rows {
		gotM[r["metadata.namespace"].(string)] = int(r["count"].(float64))
	}
	want := map[string]int{}
	for _, p := range jq(t, `[.items[] | select(.status.phase == "Failed" or .status.restartCount >= 7) | .metadata.namespace] | group_by(.) | map([.[0], length])`, filepath.Join(fixtures, "pods.json")).([]any) {
		pair := p.([]any)
		want[pair[0].(string)] = int(pair[1].(float64))
	}
	if !reflect.DeepEqual(gotM, want) {
		t.Errorf("count_by: %v, want %v (jq)", gotM, want)
	}
	// The window is over the matches, in item order.
	got = run(t, env, "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "?(@.spec.containers[?@.image == 'busybox'])", "offset": 1, "limit": 3})
	var items []map[string]any
	if err := json.Unmarshal([]byte(got[:strings.LastIndex(got, "\n--- ")]), &items); err != nil {
		t.Fatal(err)
	}
	wantIdx := ints(jq(t, `[.items | to_entries[] | select(any(.value.spec.containers[]; .image == "busybox")) | .key][1:4]`, filepath.Join(fixtures, "pods.json")))
	for i, it := range items {
		if int(it["_index"].(float64)) != wantIdx[i] {
			t.Errorf("row %d: _index %v, want %d", i, it["_index"], wantIdx[i])
		}
	}
	if !strings.Contains(got, "matches [1..4) of 8, scanned 40") {
		t.Errorf("footer: %s", got)
	}
}

// TestCountByCapRendered: past the group-tracking cap, the other row
// carries every remaining item.
func TestCountByCapRendered(t *testing.T) {
	old := maxGroups
	maxGroups = 50
	defer func() { maxGroups = old }()
	dir := t.TempDir()
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(`{"k":"v` + itoa(i%500) + `"}` + "\n")
	}
	writeFile(t, filepath.Join(dir, "x.ndjson"), b.String())
	got := run(t, dirEnv(t, dir), "count_by", map[string]any{"file": "x.ndjson", "path": "$", "group_by": "k", "top": 5})
	var rows []map[string]any
	if err := json.Unmarshal([]byte(got[:strings.LastIndex(got, "\n--- ")]), &rows); err != nil {
		t.Fatal(err, got)
	}
	sum := 0
	for _, r := range rows {
		sum += int(r["count"].(float64))
	}
	last := rows[len(rows)-1]
	if sum != 2000 || last["untracked_items"] == nil || !strings.Contains(got, "tracking stops at 50") {
		t.Errorf("sum %d, want 2000 with an untracked count: %s", sum, got)
	}
}

// TestQueryParallel runs the query tools over enough items for several
// workers (and under -race in make test), concurrently, and checks the
// answers against a plain count.
func TestQueryParallel(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"items":[`)
	want := map[string]int{}
	failed := 0
	for i := range 20000 {
		if i > 0 {
			b.WriteString(",")
		}
		ph := []string{"Running", "Failed", "Pending", "Running", "Succeeded"}[i*7%5]
		want[ph]++
		if ph == "Failed" && i%3 == 0 {
			failed++
		}
		b.WriteString(`{"n":` + itoa(i) + `,"status":{"phase":"` + ph + `","r":` + itoa(i%3) + `}}`)
	}
	b.WriteString(`]}`)
	writeFile(t, filepath.Join(dir, "big.json"), b.String())
	env := dirEnv(t, dir)
	env.Cache = NewCache(1 << 30)
	done := make(chan string, 8)
	for w := range 8 {
		go func() {
			if w%2 == 0 {
				got := run(t, env, "count_by", map[string]any{"file": "big.json", "path": "items", "group_by": "status.phase"})
				for ph, n := range want {
					if !strings.Contains(got, `{"status.phase":"`+ph+`","count":`+itoa(n)+`}`) {
						done <- "count_by: " + got
						return
					}
				}
			} else {
				got := run(t, env, "iterate_over", map[string]any{"file": "big.json", "path": "items", "fields": "n", "filter": "@.status.phase == 'Failed' && @.status.r == 0", "sort_by": "n", "order": "desc", "limit": 2})
				if !strings.Contains(got, "matches [0..2) of "+Comma(failed)+", scanned 20,000") {
					done <- "iterate_over: " + got
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if s := <-done; s != "" {
			t.Error(s)
		}
	}
}

func TestQueryBrokenNDJSONRecord(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "e.ndjson"), "{\"l\":\"a\"}\n{\"l\": oops}\n{\"l\":\"b\"}\n")
	env := dirEnv(t, dir)
	got := run(t, env, "iterate_over", map[string]any{"file": "e.ndjson", "path": "$", "fields": "l", "filter": "@.l != 'x'"})
	if !strings.Contains(got, `{"_index":2,"l":"b"}`) || !strings.Contains(got, "matches [0..2) of 2, scanned 2") {
		t.Errorf("iterate_over over a broken record: %s", got)
	}
	got = run(t, env, "count_by", map[string]any{"file": "e.ndjson", "path": "$", "group_by": "l"})
	if !strings.Contains(got, "(2 groups; 2 items)") {
		t.Errorf("count_by over a broken record: %s", got)
	}
}

// TestFilterRepairs: the corrected filter bad_filter offers (and the
// corrected path of invalid_path) for what models write that RFC 9535
// refuses.
func TestFilterRepairs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`?(@.status.phase = 'Failed')`, `?(@.status.phase == 'Failed')`},
		{`status.phase == 'x' and spec.priority > 1`, `@.status.phase == 'x' && @.spec.priority > 1`},
		{`?(@.spec.containers[*].image == 'busybox')`, `?(@.spec.containers[?@.image == 'busybox'])`},
		{`?(@..restartCount > 2)`, `?(@..[?@.restartCount > 2])`},
		{`?(@.metadata.labels.app-name == 'a.b-c')`, `?(@.metadata.labels['app-name'] == 'a.b-c')`},
		{`?(@.ok == True)`, `?(@.ok == true)`},
	} {
		if got := fixFilter(tc.in); got != tc.want {
			t.Errorf("fixFilter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for in, want := range map[string]string{
		`$.items[?@.tags[*].k == 1].name`: `$.items[?@.tags[?@.k == 1]].name`,
		`$.items.3.name`:                  `$.items[3].name`,
		`$.items.-1`:                      `$.items[-1]`,
		`$.kube-system.pods[0]`:           `$['kube-system'].pods[0]`,
	} {
		if got := fixPath(in); got != want {
			t.Errorf("fixPath(%q) = %q, want %q", in, got, want)
		}
	}
}
