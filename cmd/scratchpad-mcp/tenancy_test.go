package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/appview"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

// tenancyConfig is a config whose tokens live in a tokens file filled by
// `token add`; it returns the path, memory_dir and one token per owner.
func tenancyConfig(t *testing.T, extra string, owners ...string) (cfg, mem string, tokens map[string]string) {
	t.Helper()
	cfg, mem = writeConfig(t, "\n[http]\ntokens_file = \"tokens.toml\"\n"+extra)
	tokens = map[string]string{}
	for _, o := range owners {
		code, out, errOut := runCLI(t, "token", "add", o, "--config", cfg)
		tok := strings.TrimSpace(out)
		if code != 0 || !strings.HasPrefix(tok, "spm_") || strings.Count(out, "\n") != 1 {
			t.Fatalf("token add %s: %d %q %s", o, code, out, errOut)
		}
		tokens[o] = tok
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "tokens.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for o, tok := range tokens {
		if strings.Contains(string(data), tok) || !strings.Contains(string(data), "owner = \""+o+"\"") {
			t.Fatalf("tokens file holds the token in clear or lacks owner %s:\n%s", o, data)
		}
	}
	if fi, err := os.Stat(filepath.Join(filepath.Dir(cfg), "tokens.toml")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file mode: %v %v", fi.Mode(), err)
	}
	return cfg, mem, tokens
}

func ownerClient(t *testing.T, base, token string, hdr map[string]string) *mcp.ClientSession {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token}
	for k, v := range hdr {
		h[k] = v
	}
	// An MCP Apps host, so that the view's tools are offered and walked.
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(appview.Extension, map[string]any{"mimeTypes": []string{appview.MIMEType}})
	hc := &http.Client{Transport: headerTransport{h, http.DefaultTransport}}
	c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientOptions{Capabilities: caps}, protocolVersion)
	t.Cleanup(func() { c.Close() })
	return c
}

var storedName = regexp.MustCompile(`file: (\S+)`)

// Two owners on one server (on Redis: two servers on one Redis), both
// using run "run-1" and agent "main": owner bob addressing owner alice's
// stored outputs, artifacts, run and pads gets exactly what a name that
// never existed gets, and no listing names alice's things. Every tool and
// resource bob is offered is walked.
func TestOwnersAreIsolated(t *testing.T) {
	t.Run("file", func(t *testing.T) { ownersAreIsolated(t, "\n[pad]\nscope = \"run\"\n", false) })
	t.Run("redis", func(t *testing.T) {
		srv := testredis.Start(t)
		ownersAreIsolated(t, "\n[pad]\nscope = \"run\"\nbackend = \"redis\"\nredis_url = \""+srv.URL()+"\"\n", true)
	})
}

func ownersAreIsolated(t *testing.T, padCfg string, onRedis bool) {
	cfg, mem, tok := tenancyConfig(t, padCfg, "alice", "bob")
	base := startHTTP(t, "http", cfg)

	// 401 says how to authenticate.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("no token: HTTP %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	run := map[string]string{"X-Scratchpad-Run": "run-1", "X-Scratchpad-Role": "coordinator"}
	alice := ownerClient(t, base, tok["alice"], run)
	aliceSolo := ownerClient(t, base, tok["alice"], nil)
	waitForTool(t, alice, "listing")
	waitForTool(t, aliceSolo, "listing")
	secret := "alice-secret-finding"
	for _, step := range []struct {
		c    *mcp.ClientSession
		tool string
		args map[string]any
	}{
		{alice, "write_artifact", map[string]any{"filename": "plan.md", "content": "# plan\n" + secret}},
		{alice, "append_scratchpad", map[string]any{"note": secret}},
		{alice, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": secret}}}},
		{aliceSolo, "append_scratchpad", map[string]any{"note": secret + "-solo"}},
		{alice, "memory", map[string]any{"command": "create", "path": "/memories/plan-x.md", "file_text": secret}},
		{aliceSolo, "memory", map[string]any{"command": "create", "path": "/memories/plan-x.md", "file_text": secret + "-solo"}},
	} {
		if out := callTool(t, step.c, step.tool, step.args); strings.Contains(out, `"error"`) {
			t.Fatalf("alice %s: %s", step.tool, short(out))
		}
	}
	var aliceFiles []string
	for _, c := range []*mcp.ClientSession{alice, aliceSolo} {
		m := storedName.FindStringSubmatch(callTool(t, c, "listing", map[string]any{"n": 300}))
		if m == nil {
			t.Fatal("alice's listing was not diverted")
		}
		aliceFiles = append(aliceFiles, m[1])
	}
	art := callTool(t, alice, "list_artifacts", map[string]any{})
	if !strings.Contains(art, "plan.md") {
		t.Fatalf("alice does not list her artifact: %s", art)
	}
	artName := regexp.MustCompile(`[\w.-]*plan\.md`).FindString(art)

	// Within an owner the run is shared: alice's worker sees her artifact
	// and the run's pad.
	aliceWorker := ownerClient(t, base, tok["alice"], map[string]string{"X-Scratchpad-Run": "run-1", "X-Scratchpad-Agent": "w1"})
	if out := callTool(t, aliceWorker, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, secret) {
		t.Errorf("alice's worker cannot read her artifact: %s", short(out))
	}
	if out := callTool(t, aliceWorker, "read_scratchpad", map[string]any{}); !strings.Contains(out, secret) {
		t.Errorf("alice's worker does not share the run's pad: %s", short(out))
	}

	// On Redis bob is served by a second process (another host: its own
	// memory_dir) on the same Redis.
	bobBase := base
	if onRedis {
		cfgB, _ := writeConfig(t, "\n[http]\ntokens_file = \""+filepath.Join(filepath.Dir(cfg), "tokens.toml")+"\"\n"+padCfg)
		bobBase = startHTTP(t, "http", cfgB)
	}
	bob := ownerClient(t, bobBase, tok["bob"], run)
	bobSolo := ownerClient(t, bobBase, tok["bob"], nil)
	tools := waitForTool(t, bob, "listing")
	ghost := func(name string) string { // a name of the same shape that never existed
		return regexp.MustCompile(`[0-9a-f]{8}`).ReplaceAllString(name, "00000000")
	}
	same := func(who, tool, real, fake string, call func(name string) string) {
		t.Helper()
		got, want := call(real), call(fake)
		if strings.ReplaceAll(got, real, "NAME") != strings.ReplaceAll(want, fake, "NAME") {
			t.Errorf("%s %s on alice's %q differs from a name that never existed:\n got: %s\nwant: %s", who, tool, real, short(got), short(want))
		}
		if strings.Contains(got, secret) || strings.Contains(got, "alice") {
			t.Errorf("%s %s leaks alice's things: %s", who, tool, short(got))
		}
	}
	walked := map[string]bool{}
	fileArgs := map[string]map[string]any{
		"head": {}, "slice": {"start": 0, "end": 5}, "grep": {"pattern": "web"}, "schema": {}, "item_schema": {"path": "$.items"},
		"get_in": {"path": "$.items[0]"}, "iterate_over": {"path": "$.items"}, "read": {},
		"count_by": {"path": "$.items", "group_by": "status.phase"},
		"view":     {}, "view_page": {"mode": "items", "path": "$.items"},
	}
	for _, tl := range tools {
		name := tl.Name
		if args, ok := fileArgs[name]; ok {
			walked[name] = true
			for i, c := range []*mcp.ClientSession{bob, bobSolo} {
				for _, f := range aliceFiles {
					// alice's files by name, and by the path that reached
					// them from a run's iteration folder.
					for _, real := range []string{f, "../../" + "iteration-0/scratchpad/" + f} {
						same([]string{"bob", "bobSolo"}[i], name, real, ghost(real), func(file string) string {
							a := map[string]any{"file": file}
							for k, v := range args {
								a[k] = v
							}
							return callTool(t, c, name, a)
						})
					}
				}
			}
			continue
		}
		switch name {
		case "read_artifact":
			walked[name] = true
			for _, fn := range []string{"plan.md", artName} {
				same("bob", name, fn, "nothere-"+fn, func(f string) string {
					return callTool(t, bob, name, map[string]any{"filename": f})
				})
				same("bob", name+" run_id", fn, "nothere-"+fn, func(f string) string {
					return callTool(t, bobSolo, name, map[string]any{"filename": f, "run_id": "run-1"})
				})
			}
		case "list_artifacts":
			walked[name] = true
			// grep with no file searches every stored output bob can read:
			// none of alice's.
			for _, c := range []*mcp.ClientSession{bob, bobSolo} {
				if out := callTool(t, c, "grep", map[string]any{"pattern": "."}); strings.Contains(out, secret) || strings.Contains(out, "alice") {
					t.Errorf("bob's grep across stored outputs reaches alice's: %s", short(out))
				}
			}
			if out := callTool(t, bob, name, map[string]any{}); strings.Contains(out, "plan") {
				t.Errorf("bob lists alice's artifacts: %s", out)
			}
		case "write_artifact":
			walked[name] = true
			if out := callTool(t, bob, name, map[string]any{"filename": "plan.md", "content": "bob's plan"}); strings.Contains(out, `"replaced":true`) {
				t.Errorf("bob replaced alice's artifact: %s", out)
			}
		case "read_scratchpad":
			walked[name] = true
			for _, c := range []*mcp.ClientSession{bob, bobSolo} {
				if out := callTool(t, c, name, map[string]any{}); strings.Contains(out, secret) {
					t.Errorf("bob reads alice's pad: %s", short(out))
				}
			}
		case "memory":
			walked[name] = true
			for i, c := range []*mcp.ClientSession{bob, bobSolo} {
				who := []string{"bob", "bobSolo"}[i]
				same(who, name, "/memories/plan-x.md", "/memories/plan-y.md", func(p string) string {
					return callTool(t, c, name, map[string]any{"command": "view", "path": p})
				})
				if out := callTool(t, c, name, map[string]any{"command": "view", "path": "/memories"}); strings.Contains(out, "plan-x") {
					t.Errorf("%s lists alice's memory files: %s", who, out)
				}
				// bob's own file of the same name is bob's: created anew.
				if out := callTool(t, c, name, map[string]any{"command": "create", "path": "/memories/plan-x.md", "file_text": "bob's"}); !strings.Contains(out, "File created successfully") || !strings.Contains(out, "(revision 1)") {
					t.Errorf("%s's create of a name alice uses: %s", who, out)
				}
			}
		case "update_scratchpad", "append_scratchpad":
			walked[name] = true // written by bob below; alice's must not change
		case "echo", "listing", "words":
			walked[name] = true // upstream tools: no stored names
		}
	}
	callTool(t, bob, "append_scratchpad", map[string]any{"note": "bob-note"})
	callTool(t, bob, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "bob-task"}}})
	// Every tool of the server's own (a new one must be added here).
	loaded, err := config.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	app, err := newApp(loaded, slog.New(slog.NewTextHandler(io.Discard, nil)), agents.Identity{}, appOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range app.agents.OwnTools(agents.Identity{Role: agents.RoleCoordinator}) {
		if !walked[d.Name] {
			t.Errorf("tool %q is not walked by this test: add it", d.Name)
		}
	}
	// Resources and prompts: the pad, as bob sees it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := bob.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Resources {
		rr, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			continue
		}
		for _, c := range rr.Contents {
			if strings.Contains(c.Text, secret) {
				t.Errorf("resource %s leaks alice's pad", r.URI)
			}
		}
	}
	prompts, err := bob.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		gp, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name})
		if err != nil {
			continue
		}
		b, _ := json.Marshal(gp)
		if strings.Contains(string(b), secret) {
			t.Errorf("prompt %s leaks alice's pad", p.Name)
		}
	}
	// Alice's things are unchanged by bob.
	if out := callTool(t, alice, "read_scratchpad", map[string]any{}); !strings.Contains(out, secret) || strings.Contains(out, "bob-") {
		t.Errorf("alice's pad after bob: %s", short(out))
	}
	if out := callTool(t, alice, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, secret) {
		t.Errorf("alice's artifact after bob: %s", short(out))
	}
	if out := callTool(t, alice, "memory", map[string]any{"command": "view", "path": "/memories/plan-x.md"}); !strings.Contains(out, "\t"+secret+"\n(revision 1)") {
		t.Errorf("alice's memory file after bob: %s", short(out))
	}
	// On disk: each owner under owners/, nothing at the top.
	disk := []string{"owners/alice/run-1/artifacts", "owners/alice/run-1/pad", "owners/alice/pad", "owners/alice/scratchpad", "owners/bob/run-1/pad"}
	if onRedis {
		disk = []string{"owners/alice/scratchpad", "owners/alice/run-1/iteration-0/scratchpad"}
	}
	for _, p := range disk {
		if _, err := os.Stat(filepath.Join(mem, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for _, p := range []string{"run-1", "pad", "scratchpad"} {
		if _, err := os.Stat(filepath.Join(mem, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists outside any owner (%v)", p, err)
		}
	}
}

// pad delete and run delete: a dry run without --yes, then every trace
// gone (on Redis, a SCAN finds no key of the pad), and nothing of another
// owner's run of the same name.
func TestPadAndRunDelete(t *testing.T) {
	srv := testredis.Start(t)
	rcfg, mem := writeConfig(t, "\n[pad]\nbackend = \"redis\"\nredis_url = \""+srv.URL()+"\"\nredis_prefix = \"del\"\n")
	rd, err := pad.NewRedis(pad.RedisOptions{URL: srv.URL(), Prefix: "del"})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx := context.Background()
	ids := map[string]string{
		"alice-w1": layout.PadID("alice", "", "w1"),
		"alice-r1": layout.PadID("alice", "r1", ""),
		"bob-r1":   layout.PadID("bob", "r1", ""),
	}
	for _, id := range ids {
		p, err := rd.Open(id, pad.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Update([]pad.Patch{{Section: "Task", Op: pad.OpReplace, Content: "t"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append("n", nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"owners/alice/r1/artifacts/coordinator-plan.md", "owners/alice/r1/iteration-0/scratchpad/x.json", "owners/bob/r1/artifacts/coordinator-plan.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(mem, f)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(mem, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keysOf := func(id string) []string {
		ks, err := rd.Keys(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	// Dry runs change nothing.
	code, out, errOut := runCLI(t, "pad", "delete", "--config", rcfg, "--agent", "w1", "--owner", "alice")
	if code != 0 || !strings.Contains(out, "would delete") || len(keysOf(ids["alice-w1"])) == 0 {
		t.Fatalf("pad delete dry run: %d %s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "run", "delete", "r1", "--config", rcfg, "--owner", "alice")
	if code != 0 || !strings.Contains(out, "would delete") || len(keysOf(ids["alice-r1"])) == 0 {
		t.Fatalf("run delete dry run: %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(mem, "owners/alice/r1")); err != nil {
		t.Fatal("dry run removed the run's folder")
	}
	// For real.
	if code, out, errOut := runCLI(t, "pad", "delete", "--config", rcfg, "--agent", "w1", "--owner", "alice", "--yes"); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("pad delete: %d %s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "run", "delete", "r1", "--config", rcfg, "--owner", "alice", "--yes"); code != 0 || strings.Count(out, "deleted") != 2 {
		t.Fatalf("run delete: %d %s%s", code, out, errOut)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer raw.Close()
	var all []string
	for cursor := uint64(0); ; {
		ks, next, err := raw.Scan(ctx, cursor, "*", 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ks...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	for _, k := range all {
		if strings.Contains(k, ids["alice-w1"]) || strings.Contains(k, ids["alice-r1"]) {
			t.Errorf("orphan key %s", k)
		}
	}
	if len(keysOf(ids["bob-r1"])) == 0 {
		t.Error("bob's run-1 pad was deleted with alice's")
	}
	if _, err := os.Stat(filepath.Join(mem, "owners/alice/r1")); !os.IsNotExist(err) {
		t.Errorf("alice's run folder remains: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mem, "owners/bob/r1/artifacts/coordinator-plan.md")); err != nil {
		t.Errorf("bob's run lost its artifact: %v", err)
	}

	// Files: the agent's own pad folder.
	fcfg, fmem := writeConfig(t, "")
	dir := filepath.Join(fmem, "owners", "alice", "agents", "w1", "pad")
	fp, err := pad.Open(dir, pad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fp.Append("n", nil); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "pad", "delete", "--config", fcfg, "--agent", "w1", "--owner", "alice"); code != 0 || !strings.Contains(out, "would delete "+dir) {
		t.Fatalf("file pad delete dry run: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, "pad", "delete", "--config", fcfg, "--agent", "w1", "--owner", "alice", "--yes"); code != 0 || !strings.Contains(out, "deleted "+dir) {
		t.Fatalf("file pad delete: %d %s", code, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("pad folder remains: %v", err)
	}
}

// Two server processes (two hosts: their own memory_dir) on one Redis,
// two owners: within an owner a run's pad and artifacts are shared across
// the hosts, a large artifact comes back as a pointer the exploration
// tools read on the other host; the other owner's same run id sees
// nothing; run delete leaves no key.
func TestRedisTwoHostsTwoOwners(t *testing.T) {
	srv := testredis.Start(t)
	padCfg := "\n[pad]\nscope = \"run\"\nbackend = \"redis\"\nredis_url = \"" + srv.URL() + "\"\nredis_prefix = \"hosts\"\n"
	cfgA, memA, tok := tenancyConfig(t, padCfg, "alice", "bob")
	tokensFile := filepath.Join(filepath.Dir(cfgA), "tokens.toml")
	cfgB, memB := writeConfig(t, "\n[http]\ntokens_file = \""+tokensFile+"\"\n"+padCfg)
	baseA, baseB := startHTTP(t, "http", cfgA), startHTTP(t, "http", cfgB)

	coord := ownerClient(t, baseA, tok["alice"], map[string]string{"X-Scratchpad-Run": "run-1", "X-Scratchpad-Role": "coordinator"})
	worker := ownerClient(t, baseB, tok["alice"], map[string]string{"X-Scratchpad-Run": "run-1", "X-Scratchpad-Agent": "w1"})
	bob := ownerClient(t, baseB, tok["bob"], map[string]string{"X-Scratchpad-Run": "run-1", "X-Scratchpad-Role": "coordinator"})
	var big strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&big, "{\"pod\":\"web-%d\",\"phase\":\"Running\"}\n", i)
	}
	for _, a := range []map[string]any{{"filename": "plan.md", "content": "# plan\nalice-plan"}, {"filename": "pods.ndjson", "content": big.String()}} {
		if out := callTool(t, coord, "write_artifact", a); !strings.Contains(out, `"written":true`) {
			t.Fatalf("write_artifact: %s", out)
		}
	}
	callTool(t, coord, "append_scratchpad", map[string]any{"note": "alice-finding"})

	if out := callTool(t, worker, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, "alice-plan") {
		t.Errorf("worker on host B cannot read the artifact written on host A: %s", short(out))
	}
	if out := callTool(t, worker, "list_artifacts", map[string]any{}); !strings.Contains(out, "coordinator-plan.md") || !strings.Contains(out, "coordinator-pods.ndjson") {
		t.Errorf("worker's list: %s", short(out))
	}
	out := callTool(t, worker, "read_artifact", map[string]any{"filename": "pods.ndjson"})
	var ptr struct {
		Error string `json:"error"`
		Path  string `json:"path"`
	}
	if err := json.Unmarshal([]byte(out), &ptr); err != nil || ptr.Error != "read_artifact_too_large" || ptr.Path == "" {
		t.Fatalf("large artifact: %s", short(out))
	}
	if out := callTool(t, worker, "grep", map[string]any{"file": ptr.Path, "pattern": "web-2999"}); !strings.Contains(out, "web-2999") {
		t.Errorf("grep on the pointer's path on host B: %s", short(out))
	}
	if out := callTool(t, worker, "read_scratchpad", map[string]any{}); !strings.Contains(out, "alice-finding") {
		t.Errorf("run pad not shared across hosts: %s", short(out))
	}
	// Owner bob's run-1 on host B: nothing of alice's.
	if out := callTool(t, bob, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, `"found":false`) || !strings.Contains(out, `"available":[]`) {
		t.Errorf("bob reads alice's artifact: %s", short(out))
	}
	if out := callTool(t, bob, "list_artifacts", map[string]any{}); strings.Contains(out, "coordinator-") {
		t.Errorf("bob lists alice's artifacts: %s", short(out))
	}
	if out := callTool(t, bob, "read_scratchpad", map[string]any{}); strings.Contains(out, "alice-finding") {
		t.Errorf("bob reads alice's run pad: %s", short(out))
	}
	if out := callTool(t, bob, "write_artifact", map[string]any{"filename": "plan.md", "content": "bob"}); strings.Contains(out, `"replaced":true`) {
		t.Errorf("bob replaced alice's artifact: %s", out)
	}
	for _, mem := range []string{memA, memB} {
		if _, err := os.Stat(filepath.Join(mem, "owners", "alice", "run-1", "pad")); !os.IsNotExist(err) {
			t.Errorf("a pad folder was made under %s", mem)
		}
	}

	// run delete on either host removes alice's run everywhere on Redis.
	if code, out, errOut := runCLI(t, "run", "delete", "run-1", "--owner", "alice", "--config", cfgB, "--yes"); code != 0 {
		t.Fatalf("run delete: %d %s%s", code, out, errOut)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer raw.Close()
	keys, err := raw.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	bobKeys := 0
	for _, k := range keys {
		if strings.Contains(k, "owner:alice/run:run-1") {
			t.Errorf("orphan key %s", k)
		}
		if strings.Contains(k, "owner:bob/run:run-1") {
			bobKeys++
		}
	}
	if bobKeys == 0 {
		t.Errorf("bob's run-1 keys went too: %v", keys)
	}
	if out := callTool(t, worker, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, `"found":false`) {
		t.Errorf("after run delete: %s", short(out))
	}
}

// GET /events carries only the records of the caller's owner, and each
// owner's usage.jsonl is under its folder. Records reach every stream in
// the order they were published (one queue per subscriber, filled under
// one lock), so a record of alice's published after bob's is the event
// that shows bob's did not come to her: it must be the next one on her
// stream.
func TestEventsPerOwnerOverHTTP(t *testing.T) {
	cfg, mem, tok := tenancyConfig(t, "", "alice", "bob")
	base := startHTTP(t, "http", cfg)
	subscribe := func(owner string) chan string {
		req, _ := http.NewRequest("GET", base+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+tok[owner])
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/events as %s: %v %v", owner, resp, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		ch := make(chan string, 8)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					ch <- v
				}
			}
		}()
		return ch
	}
	evA, evB := subscribe("alice"), subscribe("bob")
	next := func(who string, ch chan string) string {
		t.Helper()
		select {
		case ev := <-ch:
			return ev
		case <-time.After(15 * time.Second):
			t.Fatalf("no event on %s's stream", who)
		}
		return ""
	}
	// alice's agent, bob's, then alice's second (the marker): each
	// owner's stream gets the record of its own agent next; bob's first
	// record, read after alice's agent finished, is his own.
	for _, step := range []struct{ owner, agent string }{{"alice", "alice-agent"}, {"bob", "bob-agent"}, {"alice", "alice-marker"}} {
		c := ownerClient(t, base, tok[step.owner], map[string]string{"X-Scratchpad-Agent": step.agent})
		waitForTool(t, c, "listing")
		callTool(t, c, "listing", map[string]any{"n": 300})
		c.Close()
		if ev := next(step.owner, map[string]chan string{"alice": evA, "bob": evB}[step.owner]); !strings.Contains(ev, `"agent_name":"`+step.agent+`"`) || !strings.Contains(ev, `"owner":"`+step.owner+`"`) {
			t.Errorf("%s's stream: %s", step.owner, ev)
		}
	}
	for owner, want := range map[string]int{"alice": 2, "bob": 1} {
		data, err := os.ReadFile(filepath.Join(mem, "owners", owner, "usage.jsonl"))
		if err != nil || strings.Count(string(data), "\n") != want || !strings.Contains(string(data), owner+"-agent") {
			t.Errorf("%s's usage.jsonl: %q %v", owner, data, err)
		}
	}
	if _, err := os.Stat(filepath.Join(mem, "usage.jsonl")); !os.IsNotExist(err) {
		t.Errorf("records outside any owner: %v", err)
	}
}

// Over stdio too, every agent has its own pad (the file backend used to
// share one between all single agents).
func TestStdioAgentsOwnPads(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	mainAgent := stdioSession(t, nil, binary(t), "serve", "--config", cfg)
	research := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--agent", "research")
	defer mainAgent.Close()
	defer research.Close()
	callTool(t, mainAgent, "append_scratchpad", map[string]any{"note": "main-note"})
	callTool(t, research, "append_scratchpad", map[string]any{"note": "research-note"})
	if out := callTool(t, mainAgent, "read_scratchpad", map[string]any{}); !strings.Contains(out, "main-note") || strings.Contains(out, "research-note") {
		t.Errorf("main's pad: %s", short(out))
	}
	if out := callTool(t, research, "read_scratchpad", map[string]any{}); strings.Contains(out, "main-note") || !strings.Contains(out, "research-note") {
		t.Errorf("research's pad: %s", short(out))
	}
	for _, p := range []string{"pad/entries.jsonl", "agents/research/pad/entries.jsonl"} {
		if _, err := os.Stat(filepath.Join(mem, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
