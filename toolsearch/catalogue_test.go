package toolsearch

import (
	"encoding/json"
	"os"
	"sync"
	"testing"
)

// The test catalogue: servers with a prefix and their tools as MCP's
// tools/list gives them (testdata/catalogue.json).
type catalogueFile struct {
	Servers []struct {
		Name   string            `json:"name"`
		Prefix string            `json:"prefix"`
		Tools  []json.RawMessage `json:"tools"`
	} `json:"servers"`
}

type query struct {
	Query  string   `json:"query"`
	Expect []string `json:"expect"`
	Kind   string   `json:"kind"` // "words": with the tool's own words; "paraphrase": without
	// Holdout marks the requests written after the weights and synonyms
	// were chosen on the others, and never tuned on: their recall is the
	// out-of-sample figure.
	Holdout bool `json:"holdout,omitempty"`
	// Added names the round that added a holdout request ("issue 35":
	// written, and committed, before the search was run on them).
	Added string `json:"added,omitempty"`
}

var (
	catOnce    sync.Once
	catTools   []Tool
	catListing []json.RawMessage // each tool as a proxy lists it: exposed name, description, inputSchema, annotations
	catErr     error
)

// loadCatalogue reads testdata/catalogue.json into Tools under their
// exposed names (prefix + "__" + name, as the proxy names them) and into
// the tool definitions a client's tools/list would hold.
func loadCatalogue(tb testing.TB) ([]Tool, []json.RawMessage) {
	tb.Helper()
	catOnce.Do(func() {
		b, err := os.ReadFile("testdata/catalogue.json")
		if err != nil {
			catErr = err
			return
		}
		var c catalogueFile
		if catErr = json.Unmarshal(b, &c); catErr != nil {
			return
		}
		for _, s := range c.Servers {
			for _, raw := range s.Tools {
				var t map[string]json.RawMessage
				if catErr = json.Unmarshal(raw, &t); catErr != nil {
					return
				}
				var name, desc string
				_ = json.Unmarshal(t["name"], &name)
				_ = json.Unmarshal(t["description"], &desc)
				exposed := s.Prefix + "__" + name
				catTools = append(catTools, Tool{Name: exposed, Server: s.Name, Description: desc, InputSchema: t["inputSchema"]})
				t["name"], _ = json.Marshal(exposed)
				listed, _ := json.Marshal(t)
				catListing = append(catListing, listed)
			}
		}
	})
	if catErr != nil {
		tb.Fatal(catErr)
	}
	return catTools, catListing
}

func loadQueries(tb testing.TB) []query {
	tb.Helper()
	b, err := os.ReadFile("testdata/queries.json")
	if err != nil {
		tb.Fatal(err)
	}
	var qs []query
	if err := json.Unmarshal(b, &qs); err != nil {
		tb.Fatal(err)
	}
	return qs
}

// rankOf is the 1-based rank of the first expected tool in hits, 0 when
// none is there.
func rankOf(hits []Hit, expect []string) int {
	for i, h := range hits {
		for _, e := range expect {
			if h.Name == e {
				return i + 1
			}
		}
	}
	return 0
}
