package memory

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The tool a model knows: one tool named memory whose command is one of
// the six, with exactly the memory tool's argument names (and the
// optional expected_revision), and no identity among them.
func TestToolDefinition(t *testing.T) {
	defs, err := Tools(func(context.Context) (Store, error) { return nil, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].Name != "memory" {
		t.Fatalf("tools %v", defs)
	}
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(defs[0].InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"command", "expected_revision", "file_text", "insert_line", "insert_text", "new_path", "new_str", "old_path", "old_str", "path", "view_range"}
	if !slices.Equal(names, want) || !slices.Equal(s.Required, []string{"command"}) {
		t.Errorf("arguments %v required %v; want %v, [command]", names, s.Required, want)
	}
	if cmds := s.Properties["command"].Enum; !slices.Equal(cmds, []string{"view", "create", "str_replace", "insert", "delete", "rename"}) {
		t.Errorf("commands %v", cmds)
	}
	if a := defs[0].Annotations; a.ReadOnly == nil || *a.ReadOnly || a.OpenWorld == nil || *a.OpenWorld {
		t.Errorf("annotations %+v", a)
	}
	if strings.Contains(defs[0].Description, "shared") {
		t.Errorf("an agent's own scope described as shared: %s", defs[0].Description)
	}
	if run, _ := Tools(nil, Options{Shared: true}); !strings.Contains(run[0].Description, "shared with the other agents of your run") {
		t.Errorf("a run's scope: %s", run[0].Description)
	}
	if named, _ := Tools(nil, Options{Name: "scratchpad_memory"}); named[0].Name != "scratchpad_memory" {
		t.Errorf("named %q, want scratchpad_memory", named[0].Name)
	}
	if _, err := Tools(nil, Options{MaxFiles: -1}); err == nil {
		t.Error("negative bound taken")
	}
	if _, err := Tools(nil, Options{ReadOnlyPaths: []string{"/etc"}}); err == nil {
		t.Error("read-only path outside /memories taken")
	}
}
