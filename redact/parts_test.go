package redact

import (
	"bytes"
	"strings"
	"testing"
)

// A GitHub token cut across two and three parts is found and masked
// where it begins; a token inside one part is not this scan's; parts
// with nothing crossing come back as they are.
func TestPartsAcrossCuts(t *testing.T) {
	r := mustNew(t, Options{})
	tok := "ghp_" + strings.Repeat("A1b2C3d4", 4) + "wXyZ"
	for _, tc := range []struct {
		name  string
		parts []string
		want  []string // "" for a part emptied; MASK for the mask
		total int
	}{
		{"two", []string{"token: " + tok[:10], tok[10:] + " rest"}, []string{"token: MASK", " rest"}, 1},
		{"three", []string{"a " + tok[:5], tok[5:20], tok[20:] + " b"}, []string{"a MASK", "", " b"}, 1},
		{"inside one", []string{"x " + tok + " y", "z"}, []string{"x " + tok + " y", "z"}, 0},
		{"clean", []string{"hello ", "world"}, []string{"hello ", "world"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make([][]byte, len(tc.parts))
			for i, p := range tc.parts {
				in[i] = []byte(p)
			}
			out, rep, err := r.Parts(in)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Total != tc.total {
				t.Errorf("total %d, want %d", rep.Total, tc.total)
			}
			for i, w := range tc.want {
				got := string(out[i])
				if strings.Contains(w, "MASK") {
					if !strings.HasPrefix(got, strings.Split(w, "MASK")[0]+"[REDACTED:github-pat:") || !strings.HasSuffix(got, strings.Split(w, "MASK")[1]) {
						t.Errorf("part %d = %q, want %q", i, got, w)
					}
				} else if got != w {
					t.Errorf("part %d = %q, want %q", i, got, w)
				}
			}
			joined := string(bytes.Join(out, nil))
			if tc.total > 0 && strings.Contains(joined, tok[4:20]) {
				t.Errorf("a piece of the token survives: %q", joined)
			}
		})
	}
	// Flag mode reports and keeps.
	f := mustNew(t, Options{Mode: Flag})
	in := [][]byte{[]byte("t " + tok[:10]), []byte(tok[10:])}
	out, rep, _ := f.Parts(in)
	if rep.Total != 1 || string(out[0]) != "t "+tok[:10] {
		t.Errorf("flag: %q %+v", out, rep)
	}
}
