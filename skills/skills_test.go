package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestExposeRoute(t *testing.T) {
	for _, tc := range []struct {
		server, uri, exposed string
	}{
		{"docs", "skill://git-workflow/SKILL.md", "skill://docs/git-workflow/SKILL.md"},
		{"docs", "skill://acme/billing/refunds/references/a.md", "skill://docs/acme/billing/refunds/references/a.md"},
		{"docs", "skill://{+path}", "skill://docs/{+path}"},
		{"gh.v2", "github://o/r/skills/x/SKILL.md", "gh.v2+github://o/r/skills/x/SKILL.md"},
	} {
		got, ok := Expose(tc.server, tc.uri)
		if !ok || got != tc.exposed {
			t.Errorf("Expose(%q, %q) = %q, %v; want %q", tc.server, tc.uri, got, ok, tc.exposed)
			continue
		}
		s, u, ok := Route(got)
		if !ok || s != tc.server || u != tc.uri {
			t.Errorf("Route(%q) = %q, %q, %v; want %q, %q", got, s, u, ok, tc.server, tc.uri)
		}
	}
	for _, tc := range []struct{ server, uri string }{
		{OwnNamespace, "skill://x/SKILL.md"}, // the own namespace is not an upstream's
		{"docs", ""},
		{"docs", "skill://"},
		{"docs", "skill:///x"},
	} {
		if got, ok := Expose(tc.server, tc.uri); ok {
			t.Errorf("Expose(%q, %q) = %q; want refused", tc.server, tc.uri, got)
		}
	}
	for _, exposed := range []string{
		"skill://docs", "skill://docs/", "skill://scratchpad-mcp/scratchpad-workflow/SKILL.md",
		"file:///a+b", "notauri", "+skill://x",
	} {
		if s, u, ok := Route(exposed); ok {
			t.Errorf("Route(%q) = %q, %q; want not routed", exposed, s, u)
		}
	}
}

var digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

type entry struct {
	URI         string            `json:"uri"`
	Frontmatter map[string]string `json:"frontmatter"`
	Resources   []struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	} `json:"resources"`
}

// TestOwnSkill holds the own skill to what a host verifies (SEP-2640,
// Integrity and verification): the URI's last segment is the name, every
// file is listed with the digest and size of the bytes resources/read
// returns, the frontmatter is the file's, and the text teaches what it
// must.
func TestOwnSkill(t *testing.T) {
	c := Own()
	if len(c.Entries()) != 1 {
		t.Fatalf("own skills: %d entries, want 1 (a broken embedded skill is dropped by mustLoad)", len(c.Entries()))
	}
	var e entry
	if err := json.Unmarshal(c.Entries()[0], &e); err != nil {
		t.Fatal(err)
	}
	const want = "skill://scratchpad-mcp/scratchpad-workflow/SKILL.md"
	if e.URI != want || e.Frontmatter["name"] != path.Base(path.Dir(want)) {
		t.Fatalf("entry %s: uri %q name %q", c.Entries()[0], e.URI, e.Frontmatter["name"])
	}
	if got, ok := c.Get(want); !ok || string(got) != string(c.Entries()[0]) {
		t.Fatalf("Get(%q) = %s, %v", want, got, ok)
	}
	if len(e.Resources) != 2 {
		t.Fatalf("resources: %+v, want SKILL.md and references/asking-the-data.md", e.Resources)
	}
	var skillMD string
	for _, r := range e.Resources {
		raw, ok := c.Read(r.URI)
		if !ok {
			t.Fatalf("Read(%q): not served", r.URI)
		}
		var res struct {
			Contents []struct{ URI, MimeType, Text string } `json:"contents"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) != 1 || res.Contents[0].URI != r.URI {
			t.Fatalf("Read(%q) = %s, %v", r.URI, raw, err)
		}
		sum := sha256.Sum256([]byte(res.Contents[0].Text))
		if !digestRE.MatchString(r.Digest) || r.Digest != "sha256:"+hex.EncodeToString(sum[:]) || r.Size != len(res.Contents[0].Text) {
			t.Errorf("%s: digest %s size %d, the bytes read have sha256:%x and %d", r.URI, r.Digest, r.Size, sum, len(res.Contents[0].Text))
		}
		if r.URI == want {
			skillMD = res.Contents[0].Text
		}
	}
	// The frontmatter as SKILL.md writes it, not as frontmatter() reads
	// it (that would compare the entry with itself).
	wantFM := map[string]string{
		"name":        "scratchpad-workflow",
		"description": "How to work through scratchpad-mcp - read the pointer a big result leaves, ask the stored data with count_by and filters before paging it, and keep findings in the pad or the memory tool instead of the context.",
	}
	if len(e.Frontmatter) != len(wantFM) {
		t.Errorf("frontmatter %v, want the keys of %v", e.Frontmatter, wantFM)
	}
	for k, v := range wantFM {
		if e.Frontmatter[k] != v {
			t.Errorf("frontmatter %s: entry %q, want %q", k, e.Frontmatter[k], v)
		}
		if !strings.Contains(skillMD, "\n"+k+": "+v+"\n") {
			t.Errorf("SKILL.md has no line %q", k+": "+v)
		}
	}
	if n := len(e.Frontmatter["description"]); n == 0 || n > 1024 {
		t.Errorf("description of %d characters (Agent Skills: 1 to 1024)", n)
	}
	for _, must := range []string{"pointer", "count_by", "filter", "read_scratchpad", "append_scratchpad", "memory", "$scratchpad"} {
		if !strings.Contains(skillMD, must) {
			t.Errorf("SKILL.md never mentions %s", must)
		}
	}
}

func TestOwnDirectories(t *testing.T) {
	c := Own()
	for _, tc := range []struct {
		dir  string
		want []string // name:mimeType
	}{
		{"skill://scratchpad-mcp", []string{"scratchpad-workflow:inode/directory"}},
		{"skill://scratchpad-mcp/scratchpad-workflow", []string{"SKILL.md:text/markdown", "references:inode/directory"}},
		{"skill://scratchpad-mcp/scratchpad-workflow/references", []string{"asking-the-data.md:text/markdown"}},
	} {
		raw, ok := c.ReadDirectory(tc.dir)
		if !ok {
			t.Errorf("ReadDirectory(%q): not a directory", tc.dir)
			continue
		}
		var res struct {
			Resources []struct{ URI, Name, MimeType string } `json:"resources"`
		}
		_ = json.Unmarshal(raw, &res)
		var got []string
		for _, r := range res.Resources {
			if r.URI != tc.dir+"/"+r.Name {
				t.Errorf("%s: child %q is not under it", tc.dir, r.URI)
			}
			got = append(got, r.Name+":"+r.MimeType)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("ReadDirectory(%q) = %v, want %v", tc.dir, got, tc.want)
		}
	}
	for _, notDir := range []string{"skill://scratchpad-mcp/scratchpad-workflow/SKILL.md", "skill://scratchpad-mcp/nope", "skill://other"} {
		if _, ok := c.ReadDirectory(notDir); ok {
			t.Errorf("ReadDirectory(%q): answered; want not a directory", notDir)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	load := func(md string) (*Catalog, error) {
		return Load(fstest.MapFS{"s/x/SKILL.md": {Data: []byte(md)}}, "s", "skill://t")
	}
	// The same setup loads a skill that is well formed, so the refusals
	// below are the frontmatter's and not the setup's.
	c, err := load("---\nname: x\ndescription: d\n---\n# x\n")
	if err != nil {
		t.Fatalf("a well-formed skill: %v", err)
	}
	if _, ok := c.Get("skill://t/x/SKILL.md"); !ok || len(c.Entries()) != 1 {
		t.Fatalf("a well-formed skill: entries %s", c.Entries())
	}
	for _, tc := range []struct{ name, md, says string }{
		{"no frontmatter", "# x\n", "no frontmatter"},
		{"unclosed", "---\nname: x\ndescription: d\n", "not closed"},
		{"name not folder", "---\nname: y\ndescription: d\n---\n", `name "y" is not the folder's name "x"`},
		{"no description", "---\nname: x\n---\n", "has no description"},
		{"not plain", "---\nname: x\ndescription: \"quoted\"\n---\n", `"description: \"quoted\"" is not a plain key: value`},
		{"nested mapping", "---\nname: x\ndescription: a: b\n---\n", `"description: a: b" is not a plain key: value`},
		{"list value (block)", "---\nname: x\ndescription: d\nmetadata:\n---\n", `"metadata:" is not a plain key: value`},
	} {
		if _, err := load(tc.md); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v; want one saying %s", tc.name, err, tc.says)
		}
	}
}
