package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// TestSkillsThroughProxy runs a skills host (skills.mjs: the TypeScript SDK
// v2 client's SkillsClient, which verifies every entry and every file it
// reads) through scratchpad-mcp, over stdio and streamable HTTP, in both
// eras, with two instances of a real skills upstream (skills-server.mjs:
// the SDK's own SkillsExtension, one skill per page) named docs and ops;
// and over the legacy SSE transport, which speaks 2025 only.
// Both serve the same upstream URIs with different bytes; ops plants a
// GitHub token in one file and does not serve directory reads (no
// directoryRead: the proxy lists its directories from the skill's entry).
// Steps, each named in its failure:
//   - connect: the extension declared (directoryRead) to a client that
//     declared it, not to one that did not;
//   - resources: resources/list and resources/templates/list name the
//     upstreams' skill files and templates under their server too;
//   - list: the own skill first, then docs' and ops' under
//     skill://docs/… and skill://ops/… (every page walked); 2026-07-28
//     pages carry ttlMs and cacheScope;
//   - get: each entry by its URI, as listed;
//   - read: every file verified (size, digest, frontmatter) and from the
//     right upstream ("(a)" from docs, "(b)" from ops), except ops'
//     GUIDE.md: the token is masked, so the host refuses the changed file
//     and the token reaches it nowhere;
//   - dir: every directory of every skill, children named under it, ops'
//     (made from entries) the same as docs' (forwarded);
//   - -32602 for an unknown skill (of a server, of no server), a file read
//     as a directory, and a skills/list cursor the proxy never gave;
//   - without the extension: skills/list, skills/get and
//     resources/directory/read are -32601.
func TestSkillsThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	bin := scratchpadBin(t)
	script, err := filepath.Abs("skills-server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Not a real token: a random one of the shape redaction knows.
	secret := testsecrets.Plant(rand.New(rand.NewPCG(55, 2640)), "github-pat").Secret
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[mcp.servers.docs]
transport = "stdio"
cmd = [%q, %q]

[mcp.servers.ops]
transport = "stdio"
cmd = [%q, %q]
env = { FLAVOR = "b", SECRET = %q, NODIR = "1" }
`, filepath.Join(t.TempDir(), "mem"), node, script, node, script, secret))
	for _, transport := range []string{"stdio", "http", "sse"} {
		target := []string{"--", bin, "serve", "--config", cfg}
		eras := []string{"pin", "legacy"}
		switch transport {
		case "http":
			target = []string{"--url", startHTTP(t, bin, cfg, "http") + "/mcp"}
		case "sse":
			target = []string{"--url", startHTTP(t, bin, cfg, "sse") + "/sse"}
			eras = []string{"legacy"}
		}
		for _, era := range eras {
			t.Run(transport+"/"+era, func(t *testing.T) {
				r := runSkills(t, node, era, transport, false, target)
				checkSkills(t, r, era, secret)
			})
			t.Run(transport+"/"+era+"/no-extension", func(t *testing.T) {
				r := runSkills(t, node, era, transport, true, target)
				if e := string(r.connect.Extensions); e != "" && e != "null" && e != "{}" {
					t.Errorf("connect: a client without the extension was told of extensions %s", r.connect.Extensions)
				}
				if len(r.steps) != 3 {
					t.Fatalf("without the extension: %d answers, want 3\nstderr:\n%s", len(r.steps), tail(r.stderr))
				}
				for _, s := range r.steps {
					// 2026-07-28 over HTTP: a 404 whose body is the
					// JSON-RPC error; the SDK quotes it in its message.
					if s.Error == nil || s.Error.Code != -32601 && !strings.Contains(s.Error.Message, `"code":-32601`) {
						t.Errorf("without the extension: %s answered %s, %+v; want -32601", s.Method, short(string(s.Result)), s.Error)
					}
				}
			})
		}
	}
}

type skillsLine struct {
	Step       string          `json:"step"`
	Era        string          `json:"era"`
	Extensions json.RawMessage `json:"extensions"`
	Skills     []struct {
		URI       string   `json:"uri"`
		Name      string   `json:"name"`
		Resources []string `json:"resources"`
	} `json:"skills"`
	TTLMs      *int            `json:"ttlMs"`
	CacheScope *string         `json:"cacheScope"`
	URI        string          `json:"uri"`
	Skill      json.RawMessage `json:"skill"`
	Verified   bool            `json:"verified"`
	Text       string          `json:"text"`
	Resources  []struct {
		URI, Name, MimeType string
	} `json:"resources"`
	Templates []string        `json:"templates"`
	URIs      []string        `json:"uris"`
	Method    string          `json:"method"`
	Result    json.RawMessage `json:"result"`
	Error     *struct {
		Message string `json:"message"`
		Code    any    `json:"code"`
		Reason  string `json:"reason"`
	} `json:"error"`
}

type skillsRun struct {
	connect skillsLine
	steps   []skillsLine
	stdout  string
	stderr  string
}

func runSkills(t *testing.T, node, era, transport string, noExt bool, target []string) *skillsRun {
	t.Helper()
	args := []string{"skills.mjs", "--era", era, "--transport", transport}
	if noExt {
		args = append(args, "--no-ext")
	}
	stdout, stderr, runErr := runNode(node, "", 90*time.Second, append(args, target...)...)
	r := &skillsRun{stdout: stdout, stderr: stderr}
	for line := range strings.Lines(stdout) {
		var l skillsLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("skills.mjs: a line is not JSON: %v: %s", err, short(line))
		}
		// A JSON-RPC code is a number; the SDK's own errors carry a string.
		if l.Error != nil {
			if f, ok := l.Error.Code.(float64); ok {
				l.Error.Code = int(f)
			}
		}
		if l.Step == "connect" {
			r.connect = l
		} else {
			r.steps = append(r.steps, l)
		}
	}
	if runErr != nil || r.connect.Step == "" || r.connect.Error != nil {
		t.Fatalf("connect: skills.mjs --era %s over %s: %v %+v\nstderr:\n%s", era, transport, runErr, r.connect.Error, tail(r.stderr))
	}
	return r
}

func checkSkills(t *testing.T, r *skillsRun, era, secret string) {
	t.Helper()
	var ext map[string]struct {
		DirectoryRead bool `json:"directoryRead"`
	}
	if err := json.Unmarshal(r.connect.Extensions, &ext); err != nil || !ext["io.modelcontextprotocol/skills"].DirectoryRead {
		t.Errorf("connect: extensions %s; want io.modelcontextprotocol/skills with directoryRead", r.connect.Extensions)
	}
	if strings.Contains(r.stdout, secret) {
		t.Errorf("redact: the token planted in ops' GUIDE.md reached the client")
	}
	wantSkills := []string{
		"skill://scratchpad-mcp/scratchpad-workflow/SKILL.md",
		"skill://docs/acme/billing/refunds/SKILL.md",
		"skill://docs/git-workflow/SKILL.md",
		"skill://ops/acme/billing/refunds/SKILL.md",
		"skill://ops/git-workflow/SKILL.md",
	}
	files := map[string]bool{}
	var reads, gets, dirs, raws int
	listing := map[string]string{} // directory URI → its children, "name:mimeType …"
	for _, s := range r.steps {
		switch {
		case s.Step == "resources":
			for _, want := range []string{"skill://docs/{+path}", "skill://ops/{+path}"} {
				if !slices.Contains(s.Templates, want) {
					t.Errorf("resources: templates %v lack %s", s.Templates, want)
				}
			}
			// ops' SkillSource lists no resources (it has no listResources).
			for _, want := range []string{"skill://docs/git-workflow/SKILL.md", "skill://docs/acme/billing/refunds/SKILL.md"} {
				if !slices.Contains(s.URIs, want) {
					t.Errorf("resources: %v lack %s", s.URIs, want)
				}
			}
			for _, u := range append(slices.Clone(s.Templates), s.URIs...) {
				if strings.HasPrefix(u, "skill://") && !strings.HasPrefix(u, "skill://docs/") && !strings.HasPrefix(u, "skill://ops/") {
					t.Errorf("resources: %s is listed under no server", u)
				}
			}
		case s.Step == "list":
			if s.Error != nil {
				t.Fatalf("list: %+v", s.Error)
			}
			var got []string
			for _, sk := range s.Skills {
				got = append(got, sk.URI)
				if !strings.HasSuffix(sk.URI, "/"+sk.Name+"/SKILL.md") {
					t.Errorf("list: %s is named %q: the URI's last segment must be the name", sk.URI, sk.Name)
				}
				for _, f := range sk.Resources {
					files[f] = true
				}
			}
			if !slices.Equal(got, wantSkills) {
				t.Errorf("list: %v\nwant %v", got, wantSkills)
			}
			if (era == "pin") != (s.TTLMs != nil && s.CacheScope != nil) {
				t.Errorf("list: ttlMs %v cacheScope %v in era %s (2026-07-28 only)", s.TTLMs, s.CacheScope, era)
			}
		case s.Step == "get":
			gets++
			var sk struct{ URI string }
			if s.Error != nil || json.Unmarshal(s.Skill, &sk) != nil || sk.URI != s.URI {
				t.Errorf("get %s: %s %+v", s.URI, s.Skill, s.Error)
			}
		case s.Step == "read":
			reads++
			if s.Error != nil {
				if strings.Contains(s.Error.Message, "skill://ops/git-workflow/references/GUIDE.md") && (s.Error.Reason == "size" || s.Error.Reason == "digest") {
					continue // masked: the host refuses it, as it must
				}
				t.Errorf("read: %+v", s.Error)
				continue
			}
			if !s.Verified {
				t.Errorf("read %s: not verified", s.URI)
			}
			want := map[string]string{"skill://docs/": "(a)", "skill://ops/": "(b)"}
			for prefix, flavor := range want {
				if strings.HasPrefix(s.URI, prefix) && !strings.Contains(s.Text, flavor) {
					t.Errorf("read %s: %q is not from its upstream (want %s)", s.URI, short(s.Text), flavor)
				}
			}
			if s.URI == "skill://ops/git-workflow/references/GUIDE.md" {
				t.Errorf("read %s: verified although redaction changed it", s.URI)
			}
		case s.Step == "raw":
			// What no skill or directory answers: -32602 (SEP-2640),
			// quoted in the SDK's message for a 2026-07-28 HTTP 400.
			raws++
			if s.Error == nil || s.Error.Code != -32602 && !strings.Contains(s.Error.Message, `"code":-32602`) {
				t.Errorf("raw %s: %s %+v; want -32602", s.Method, short(string(s.Result)), s.Error)
			}
		case s.Step == "dir":
			dirs++
			if s.Error != nil {
				t.Errorf("dir %s: %+v", s.URI, s.Error)
				continue
			}
			if len(s.Resources) == 0 {
				t.Errorf("dir %s: no children", s.URI)
			}
			var names []string
			for _, c := range s.Resources {
				kind := "file"
				if c.MimeType == "inode/directory" {
					kind = "dir"
				}
				names = append(names, c.Name+":"+kind)
				if c.URI != s.URI+"/"+c.Name {
					t.Errorf("dir %s: child %s (%s) is not under it", s.URI, c.URI, c.Name)
				}
				if c.MimeType != "inode/directory" && !files[c.URI] {
					t.Errorf("dir %s: file %s is not in any listed skill's resources", s.URI, c.URI)
				}
			}
			slices.Sort(names)
			listing[s.URI] = strings.Join(names, " ")
		}
	}
	for dir, docs := range listing {
		if rest, ok := strings.CutPrefix(dir, "skill://docs/"); ok && listing["skill://ops/"+rest] != docs {
			t.Errorf("dir: ops' %s (from its entry) lists %q, docs' (forwarded) %q", rest, listing["skill://ops/"+rest], docs)
		}
	}
	// 2 own files, 6 per upstream; 2 own directories, 6 per upstream.
	if gets != len(wantSkills) || reads != 2+6+6 || dirs != 2+6+6 || raws != 4 {
		t.Errorf("steps: %d gets, %d reads, %d directory reads, %d bare requests; want %d, 14, 14, 4\nstderr:\n%s", gets, reads, dirs, raws, len(wantSkills), tail(r.stderr))
	}
}
