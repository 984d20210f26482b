package layout

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every kind of path, built by a Tree (for no owner and for an owner) and
// classified back: the kind and the run are the ones it was built as.
func TestBuildAndClassify(t *testing.T) {
	mem := filepath.FromSlash("/m")
	for _, owner := range []string{"", "alice"} {
		tr := For(mem, owner)
		for _, tt := range []struct {
			path string
			kind string
			run  string // "" or the run it belongs to
		}{
			{filepath.Join(tr.Scratchpad(), "k8s-list-1234.json"), KindOutput, ""},
			{filepath.Join(tr.Scratchpad(), TempName("k8s-list-1234.json", "99")), KindTemp, ""},
			{filepath.Join(tr.AgentPad(DefaultAgent), "pad.md"), KindPad, ""},
			{filepath.Join(tr.AgentPad(""), ".history", "1.md"), KindPad, ""},
			{filepath.Join(tr.AgentPad("research"), "pad.md"), KindPad, ""},
			{filepath.Join(tr.AgentPad("research"), TempName("pad.md", "7")), KindTemp, ""},
			{filepath.Join(tr.Pad("", "w1"), "entries.jsonl"), KindPad, ""},
			{tr.Usage(), KindUsage, ""},
			{filepath.Join(tr.Base, UsageRotationName(3)), KindUsage, ""},
			{filepath.Join(tr.RunScratchpad("r1", 2), "a.json"), KindOutput, "r1"},
			{filepath.Join(tr.Run("r1"), IterationScratchpad(0), "b.json"), KindOutput, "r1"},
			{filepath.Join(tr.Artifacts("r1"), "coordinator-plan.md"), KindArtifact, "r1"},
			{filepath.Join(tr.Artifacts("r1"), TempName("coordinator-plan.md", "0011")), KindTemp, "r1"},
			{filepath.Join(tr.RunPad("r1"), "pad.md"), KindPad, "r1"},
			{filepath.Join(tr.Pad("r1", "w1"), ".history", "2.md"), KindPad, "r1"},
			{filepath.Join(tr.RunPad("r1"), PadMemoriesDir, "notes", "a.md"), KindPad, "r1"},
			{filepath.Join(tr.AgentPad("w1"), filepath.FromSlash(PadMemoriesHistoryDir), PadMemoryHistoryName("a.md"), PadMemoryVersionName(3)), KindPad, ""},
			{filepath.Join(tr.AgentPad(""), PadMemoriesDir, TempName("a.md", "5")), KindTemp, ""},
			{filepath.Join(tr.Run("r1"), "notes.txt"), KindOther, "r1"},
			{filepath.Join(tr.Base, TrashName("r1", "abc"), ArtifactsDir, "plan.md"), KindTrash, ""},
			{filepath.Join(tr.Base, LockFile), KindOther, ""},
			{filepath.Join(tr.Base, AgentsDir, "bob", "notes.txt"), KindOther, ""},
			{filepath.Join(tr.Base, "stray.txt"), KindOther, ""},
		} {
			rel, err := filepath.Rel(tr.Base, tt.path)
			if err != nil {
				t.Fatal(err)
			}
			want := Class{Kind: tt.kind}
			if tt.run != "" {
				want.Run = tr.Run(tt.run)
			}
			if got := Classify(tr.Base, rel); got != want {
				t.Errorf("owner %q: Classify(%s) = %+v, want %+v", owner, rel, got, want)
			}
		}
	}
}

// The paths themselves, spelt out once, so that a change of the layout is
// a change of this table (stored data of earlier versions must still be
// found).
func TestPaths(t *testing.T) {
	none, alice := For("/m", ""), For("/m", "alice")
	for _, tt := range []struct{ got, want string }{
		{none.Base, "/m"},
		{none.Scratchpad(), "/m/scratchpad"},
		{none.AgentPad("main"), "/m/pad"},
		{none.AgentPad("research"), "/m/agents/research/pad"},
		{none.RunPad("r1"), "/m/r1/pad"},
		{none.Usage(), "/m/usage.jsonl"},
		{none.RunScratchpad("r1", 2), "/m/r1/iteration-2/scratchpad"},
		{alice.Base, "/m/owners/alice"},
		{alice.Scratchpad(), "/m/owners/alice/scratchpad"},
		{alice.AgentPad("main"), "/m/owners/alice/pad"},
		{alice.AgentPad("research"), "/m/owners/alice/agents/research/pad"},
		{alice.Run("r1"), "/m/owners/alice/r1"},
		{alice.Artifacts("r1"), "/m/owners/alice/r1/artifacts"},
		{alice.Usage(), "/m/owners/alice/usage.jsonl"},
		{alice.Pad("r1", "w"), "/m/owners/alice/r1/pad"},
		{alice.Pad("", "w"), "/m/owners/alice/agents/w/pad"},
		{IterationScratchpad(3), "iteration-3/scratchpad"},
		{For("/m/", "").Base, "/m"},
	} {
		if tt.got != filepath.FromSlash(tt.want) {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestRedisKeys(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{PadID("", "", "w1"), "agent:w1"},
		{PadID("", "r1", "w1"), "run:r1"},
		{PadID("alice", "r1", "w1"), "owner:alice/run:r1"},
		{PadID("alice", "", "main"), "owner:alice/agent:main"},
		{ArtifactsKey("sp", "", "r1"), "sp:{artifacts:run:r1}"},
		{ArtifactsKey("sp", "bob", "r1"), "sp:{artifacts:owner:bob/run:r1}"},
		{RedisBase("sp", PadID("bob", "r1", "")), "sp:{owner:bob/run:r1}"},
		{RedisKeyPrefix("sp:{run:r1}"), "sp:{run:r1}:"},
		{RedisKey("sp:{run:r1}", RedisPadDoc), "sp:{run:r1}:doc"},
		{RedisKey("b", RedisPadHistory), "b:history"},
		{RedisKey("b", RedisPadLedger), "b:ledger"},
		{RedisKey("b", RedisPadNotice), "b:notice"},
		{RedisKey("b", RedisPadVersion), "b:version"},
		{RedisKey("b", RedisPadKeys), "b:keys"},
		{RedisKey("b", RedisPadKeysHistory), "b:keys:history"},
		{RedisKey("b", RedisPadSnapshots), "b:snapshots"},
		{RedisKey("b", RedisPadLock), "b:lock"},
		{RedisKey("b", RedisPadNoGuard), "b:dedupe"},
		{RedisKey("b", RedisPadBroken(1700000000, 1)), "b:broken:1700000000"},
		{RedisKey("b", RedisPadBroken(1700000000, 3)), "b:broken:1700000000-3"},
		{RedisKey("b", RedisPadKeysBroken(1700000000, 2)), "b:keys:broken:1700000000-2"},
		{RedisKey("b", RedisPadWriteGuard("k1")), "b:dedupe:w:k1"},
		{RedisKey("b", RedisPadAppendGuard("ab12")), "b:dedupe:ab12"},
		{RedisKey("b", RedisPadMemory), "b:memory"},
		{RedisKey("b", RedisPadMemoryAccess), "b:memory:atime"},
		{RedisKey("b", RedisPadMemoryDeleted), "b:memory:deleted"},
		{RedisKey("b", RedisPadMemoryHistory("notes/a b.md")), "b:memory:history:notes/a b.md"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}

func TestTempNames(t *testing.T) {
	for name, want := range map[string]bool{
		".pad.md.tmp-123":        true,
		".tmp-pad.md-123":        true, // pad before the layout package
		".tmp-0011-plan.md":      true, // artifacts before it
		".k8s-list.json.tmp-abc": true,
		"pad.md":                 false,
		".history":               false,
		"x.tmp-1":                false, // not hidden: a name of the user's
	} {
		if got := IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v", name, got)
		}
	}
	if p := TempPattern("pad.md"); !IsTemp(p) {
		t.Errorf("TempPattern %q is not a temp name", p)
	}
	for _, run := range []string{OwnersDir, AgentsDir, PadDir, ScratchpadDir, UsageFile} {
		if !Reserved(run) {
			t.Errorf("%q not reserved", run)
		}
	}
	if Reserved("r1") {
		t.Error("r1 reserved")
	}
}

func TestScopes(t *testing.T) {
	m := t.TempDir()
	for _, d := range []string{"owners/alice", "owners/bob", "r1"} {
		if err := os.MkdirAll(filepath.Join(m, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(m, "owners", "stray"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_ = os.Symlink("..", filepath.Join(m, "owners", "link")) // a link is no tree (where links can be made)
	got := Scopes(os.DirFS(m))
	want := []string{".", "owners/alice", "owners/bob"}
	if !slices.Equal(got, want) {
		t.Fatalf("Scopes = %v, want %v", got, want)
	}
}

// The artifacts folder as a run's agents reach it from their stored
// outputs' folder is the run's artifacts folder.
func TestArtifactsFromScratchpad(t *testing.T) {
	tr := For("/m", "alice")
	got := filepath.Join(tr.RunScratchpad("r1", 4), filepath.FromSlash(ArtifactsFromScratchpad))
	if got != tr.Artifacts("r1") {
		t.Fatalf("%s leads to %s, not %s", ArtifactsFromScratchpad, got, tr.Artifacts("r1"))
	}
}

// Every part, made and read back, is its own row of the table; keys of
// other pads, and parts the table lacks, are not.
func TestParseRedisPadKey(t *testing.T) {
	const base = "sp:{run:r1}"
	for _, tt := range []struct {
		part RedisPart
		want string // the row's Name
	}{
		{RedisPadDoc, "doc"}, {RedisPadHistory, "history"}, {RedisPadLedger, "ledger"},
		{RedisPadNotice, "notice"}, {RedisPadVersion, "version"}, {RedisPadKeys, "keys"},
		{RedisPadKeysHistory, "keys:history"}, {RedisPadSnapshots, "snapshots"},
		{RedisPadLock, "lock"}, {RedisPadNoGuard, "dedupe"},
		{RedisPadBroken(5, 1), "broken:"}, {RedisPadKeysBroken(5, 2), "keys:broken:"},
		{RedisPadWriteGuard("x"), "dedupe:w:"}, {RedisPadAppendGuard("x"), "dedupe:"},
		{RedisPadMemory, "memory"}, {RedisPadMemoryAccess, "memory:atime"}, {RedisPadMemoryDeleted, "memory:deleted"},
		{RedisPadMemoryHistory("atime"), "memory:history:"}, {RedisPadMemoryHistory("a/b.md"), "memory:history:"},
	} {
		got, ok := ParseRedisPadKey(base, RedisKey(base, tt.part))
		if !ok || got.Name != tt.want {
			t.Errorf("ParseRedisPadKey(%s) = %+v, %v; want %q", tt.part, got, ok, tt.want)
		}
	}
	for _, key := range []string{base + ":retry:x", base + ":broken:", base + ":docs", "sp:{run:r10}:doc", base} {
		if got, ok := ParseRedisPadKey(base, key); ok {
			t.Errorf("ParseRedisPadKey(%s) = %+v, want none", key, got)
		}
	}
	names := map[string]bool{}
	for _, p := range RedisPadParts {
		if names[p.Name] || p.Expiry == 0 || p.Doc == "" {
			t.Errorf("row %+v: repeated, or no expiry or doc", p)
		}
		names[p.Name] = true
	}
	ttl := RedisPadTTLParts()
	if len(ttl) != 11 || ttl[0] != RedisPadDoc || slices.Contains(ttl, RedisPadLock) {
		t.Errorf("TTL parts %v", ttl)
	}
}

func TestOAuthRecordName(t *testing.T) {
	cases := []struct{ owner, server, want string }{
		{"", "linear", "oauth/linear"},
		{"alice", "linear", "owner:alice/oauth/linear"},
		{"", "a/b", "oauth/a%2Fb"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		got := OAuthRecordName(c.owner, c.server)
		if got != c.want {
			t.Errorf("OAuthRecordName(%q, %q) = %q, want %q", c.owner, c.server, got, c.want)
		}
		if seen[got] {
			t.Errorf("OAuthRecordName(%q, %q) = %q twice", c.owner, c.server, got)
		}
		seen[got] = true
	}
}

func TestOAuthWebLoginNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{OAuthWebLoginName("abc"), "oauth-login/id/abc"},
		{OAuthWebLoginName("a/b"), "oauth-login/id/a%2Fb"},
		{OAuthWebLoginStateName("00ff"), "oauth-login/state/00ff"},
		{OAuthWebLoginOwnerName("alice", "linear"), "owner:alice/oauth-login/server/linear"},
		{OAuthWebLoginOwnerName("", "a/b"), "oauth-login/server/a%2Fb"},
	}
	seen := map[string]bool{OAuthRecordName("alice", "linear"): true}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
		if seen[c.got] {
			t.Errorf("%q twice", c.got)
		}
		seen[c.got] = true
	}
}

// A memory file's version folder is one short flat name whatever its
// path, and version names sort as revisions do and parse back.
func TestPadMemoryNames(t *testing.T) {
	long := strings.Repeat("ä/", 300)
	for _, p := range []string{"a.md", "notes/a.md", long} {
		n := PadMemoryHistoryName(p)
		if len(n) != 32 || !filepath.IsLocal(n) || strings.ContainsAny(n, "/.") {
			t.Errorf("PadMemoryHistoryName(%.20q) = %q", p, n)
		}
	}
	if PadMemoryHistoryName("a.md") == PadMemoryHistoryName("a.md/") {
		t.Error("two paths, one folder")
	}
	if a, b := PadMemoryVersionName(9), PadMemoryVersionName(10); a >= b || len(a) != 20 {
		t.Errorf("%s, %s", a, b)
	}
	for _, tt := range []struct {
		name string
		rev  int64
		ok   bool
	}{
		{PadMemoryVersionName(7), 7, true},
		{PadMemoryPathFile, 0, false},
		{PadMemoryDeletedFile, 0, false},
		{TempName(PadMemoryVersionName(7), "1"), 0, false},
		{"00000000000000000000", 0, false},
		{"-0000000000000000001", 0, false},
	} {
		if rev, ok := ParsePadMemoryVersionName(tt.name); rev != tt.rev || ok != tt.ok {
			t.Errorf("ParsePadMemoryVersionName(%q) = %d, %v", tt.name, rev, ok)
		}
	}
}
