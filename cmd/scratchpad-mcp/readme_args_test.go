package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// The tool tables of docs/tools.md (README's once, issue 58 moved them)
// name each own tool's arguments exactly as its listed schema has them
// (issue 38, item 15): every argument the schema declares is documented,
// every documented one exists (inside a patch item too: `patches:
// [{section, op, content}]`), and a documented default (`lines`=50) is
// the schema's default. A schema that gains, loses or renames an
// argument, or changes a default, fails here until docs/tools.md says
// the same.
func TestREADMEToolArguments(t *testing.T) {
	b, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	reg, err := agents.NewRegistry(agents.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, d := range reg.OwnTools(agents.Identity{Agent: "main", Role: agents.RoleCoordinator}) {
		var s map[string]any
		if err := json.Unmarshal(d.InputSchema, &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		schemas[d.Name] = s
	}
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| ([^|]*) \\|")
	span := regexp.MustCompile("`([^`]*)`(=[^,;`|) ]+)?")
	documented := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || schemas[m[1]] == nil {
			continue
		}
		name, cell := m[1], m[2]
		documented[name] = true
		props, _ := schemas[name]["properties"].(map[string]any)
		seen := map[string]bool{}
		var arrayName string
		for _, sm := range span.FindAllStringSubmatch(cell, -1) {
			text, def := sm[1], strings.TrimPrefix(sm[2], "=")
			arg, items, hasItems := strings.Cut(text, ":")
			arg = strings.TrimSpace(arg)
			if strings.HasPrefix(text, "[{") { // a second form of the array before it
				arg, items, hasItems = arrayName, text, true
			}
			if arg == "" {
				continue
			}
			p, ok := props[arg].(map[string]any)
			if !ok {
				t.Errorf("docs/tools.md:%d: %s documents argument %q, which its schema does not have (it has %v)", i+1, name, arg, keys(props))
				continue
			}
			seen[arg] = true
			if def != "" {
				if got := fmt.Sprint(p["default"]); got != def {
					t.Errorf("docs/tools.md:%d: %s's %s defaults to %s there, %s in its schema", i+1, name, arg, def, got)
				}
			}
			if hasItems {
				arrayName = arg
				itemProps, _ := p["items"].(map[string]any)["properties"].(map[string]any)
				for _, f := range strings.FieldsFunc(items, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
					if _, ok := itemProps[f]; !ok {
						t.Errorf("docs/tools.md:%d: %s documents %s[].%s, which its schema does not have (it has %v)", i+1, name, arg, f, keys(itemProps))
					}
				}
			}
		}
		for _, arg := range keys(props) {
			if !seen[arg] {
				t.Errorf("docs/tools.md:%d: %s's argument %q is not in its row", i+1, name, arg)
			}
		}
	}
	for name := range schemas {
		if !documented[name] {
			t.Errorf("docs/tools.md has no row for the tool %s", name)
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
