package pad

import (
	"encoding/json"
	"fmt"
	"strings"
)

// renderKV renders the pad as "name = JSON" lines, one fact per line:
// sections as section.<Name>, a structured state as state, keys as
// key.<name> (attributes after "  # "), ledger entries as ledger.<n>
// (1 = oldest), then counts and what was left out. Every value is JSON,
// so a line never spans two.
func renderKV(v *View, entries []Entry, omitted int, warnings []string) string {
	var b strings.Builder
	q := func(s string) string {
		data, _ := json.Marshal(s)
		return string(data)
	}
	if v.Header != "" {
		fmt.Fprintf(&b, "header = %s\n", q(v.Header))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "note = %s\n", q(n))
	}
	for _, w := range warnings {
		fmt.Fprintf(&b, "warning = %s\n", q(w))
	}
	if !v.KeysOnly {
		if v.Format == FormatJSON {
			data, _ := json.Marshal(v.State)
			fmt.Fprintf(&b, "state = %s\n", data)
		} else {
			for _, s := range v.Sections {
				fmt.Fprintf(&b, "section.%s = %s  # %d/%d chars\n", s.Name, q(s.Body), s.Chars, s.Cap)
			}
		}
	}
	for _, k := range v.Keys {
		fmt.Fprintf(&b, "key.%s = %s", k.Name, k.Value)
		if note := keyNote(k); note != "" {
			fmt.Fprintf(&b, "  # %s", note)
		}
		b.WriteString("\n")
	}
	if v.KeyStats != "" {
		fmt.Fprintf(&b, "key_stats = %s\n", q(v.KeyStats))
	}
	if !v.KeysOnly {
		fmt.Fprintf(&b, "ledger.total = %d\n", len(entries)+omitted)
		for i, e := range entries {
			fmt.Fprintf(&b, "ledger.%d = %s\n", omitted+i+1, q(strings.TrimSuffix(strings.TrimPrefix(mdEntry(e), "- "), "\n")))
		}
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "left_out.ledger = %d\n", omitted)
	}
	if len(v.KeysLeftOut) > 0 {
		data, _ := json.Marshal(v.KeysLeftOut)
		fmt.Fprintf(&b, "left_out.keys = %s\n", data)
	}
	if omitted > 0 || len(v.KeysLeftOut) > 0 {
		fmt.Fprintf(&b, "left_out.max_tokens = %d\n", v.MaxTokens)
	}
	return b.String()
}
