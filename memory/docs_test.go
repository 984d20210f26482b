package memory

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/memory.md's table of commands names every command once and, among
// them, exactly the arguments the tool's schema declares (besides command
// and expected_revision, documented in prose): a schema that gains or
// renames one fails here until the doc says the same.
func TestDocsCommands(t *testing.T) {
	b, err := os.ReadFile("../docs/memory.md")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := Tools(func(context.Context) (Store, error) { return nil, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(defs[0].InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]*) \\|")
	arg := regexp.MustCompile("`([a-z_]+)`")
	var cmds, args []string
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || !slices.Contains(Commands, m[1]) {
			continue
		}
		cmds = append(cmds, m[1])
		for _, a := range arg.FindAllStringSubmatch(m[2], -1) {
			if _, ok := s.Properties[a[1]]; !ok {
				t.Errorf("docs/memory.md documents %s's argument %q, which the schema does not have", m[1], a[1])
			}
			args = append(args, a[1])
		}
	}
	if !slices.Equal(cmds, Commands) {
		t.Errorf("documented commands %v, want %v", cmds, Commands)
	}
	for name := range s.Properties {
		if name != "command" && name != "expected_revision" && !slices.Contains(args, name) {
			t.Errorf("argument %q is not in docs/memory.md's table", name)
		}
	}
	if !strings.Contains(string(b), "`expected_revision`") {
		t.Error("docs/memory.md does not document expected_revision")
	}
}
