package pad

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestToolsSnapshot pins the pad tools as tools/list shows them, for both
// pad formats: their names, descriptions and schemas are what models call
// them by, so a change to them is a reviewed diff of the golden files
// (go test ./pad -run TestToolsSnapshot -update).
func TestToolsSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"tools-markdown.json", Options{}},
		{"tools-json.json", Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}},
	} {
		defs, err := Tools(nil, tc.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		list := make([]map[string]json.RawMessage, len(defs))
		for i, d := range defs {
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &list[i]); err != nil {
				t.Fatal(err)
			}
		}
		got, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("..", "testdata", "pad", tc.name)
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("Tools(%s) changed; if intended, run go test ./pad -run TestToolsSnapshot -update\n%s", tc.name, got)
		}
	}
}
