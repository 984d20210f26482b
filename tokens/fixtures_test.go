package tokens

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir holds inputs with token counts recorded from OpenAI's tiktoken
// (testdata/tokens/record.sh).
const fixtureDir = "../testdata/tokens"

func loadCounts(t testing.TB) map[string]map[string]int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, "counts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var counts map[string]map[string]int
	if err := json.Unmarshal(raw, &counts); err != nil {
		t.Fatal(err)
	}
	return counts
}

func TestFixturesMatchReference(t *testing.T) {
	counts := loadCounts(t)
	if len(counts) < 10 {
		t.Fatalf("only %d fixtures in counts.json", len(counts))
	}
	for file, want := range counts {
		data, err := os.ReadFile(filepath.Join(fixtureDir, file))
		if err != nil {
			t.Fatal(err)
		}
		for enc, n := range want {
			c, err := ForEncoding(enc)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Count(data); got != n {
				t.Errorf("%s %s: got %d, want %d (tiktoken)", file, enc, got, n)
			}
			if got := c.CountString(string(data)); got != n {
				t.Errorf("%s %s CountString: got %d, want %d", file, enc, got, n)
			}
			// The Anthropic counter is the cl100k count scaled.
			if enc == CL100kBase {
				a, _ := ForEncoding(Claude)
				if got, want := a.Count(data), (n*11+9)/10; got != want {
					t.Errorf("%s claude: got %d, want %d", file, got, want)
				}
			}
		}
	}
}
