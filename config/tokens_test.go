package config

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestTokenSetFollowsTheFile (issue 38 item 13): a [TokenSet] sees the
// tokens file replaced, grown, broken (the last good tokens stay) and
// removed (its tokens go, the config's own stay), without a new load; and
// a change made between the load and the set is not missed. It looks at
// the file once per [TokenRecheck], not sooner: the test runs in a
// testing/synctest bubble, where that second passes at once and exactly.
func TestTokenSetFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) { tokenSetFollowsTheFile(t, dir) })
}

func tokenSetFollowsTheFile(t *testing.T, dir string) {
	file := filepath.Join(dir, "tokens.toml")
	entry := func(owner, tok string) string {
		return fmt.Sprintf("[[tokens]]\nowner = %q\ntoken_sha256 = \"%x\"\n", owner, sha256.Sum256([]byte(tok)))
	}
	write := func(body string) {
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write(entry("alice", "tok-a") + entry("bob", "tok-b"))
	cfgPath := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfgPath, []byte("[http]\ntokens_file = \"tokens.toml\"\ntokens = [{ owner = \"ops\", token = \"tok-ops\" }]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	// Changed between the load and the set: the first look reads it.
	write(entry("alice", "tok-a") + entry("bob", "tok-b") + entry("eve", "tok-e"))
	set := NewTokenSet(c, nil)
	// owners is the tokens in force as owner/token (the token found by
	// its hash among the test's).
	owners := func() []string {
		var o []string
		for _, tk := range set.Tokens() {
			name := "?"
			for _, s := range []string{"tok-ops", "tok-a", "tok-A", "tok-b", "tok-c", "tok-d", "tok-e"} {
				if sha256.Sum256([]byte(s)) == tk.SHA256 {
					name = s
				}
			}
			o = append(o, tk.Owner+"/"+name)
		}
		return o
	}
	if got := owners(); !slices.Equal(got, []string{"ops/tok-ops", "alice/tok-a", "bob/tok-b"}) {
		t.Fatalf("at start: %v", got)
	}
	for _, step := range []struct {
		name string
		do   func()
		want []string
	}{
		{"changed before the set was made", func() {}, []string{"ops/tok-ops", "alice/tok-a", "bob/tok-b", "eve/tok-e"}},
		{"bob and eve revoked", func() { write(entry("alice", "tok-a")) }, []string{"ops/tok-ops", "alice/tok-a"}},
		{"alice rotated (same size)", func() { write(entry("alice", "tok-A")) }, []string{"ops/tok-ops", "alice/tok-A"}},
		{"carol added", func() { write(entry("alice", "tok-A") + entry("carol", "tok-c")) }, []string{"ops/tok-ops", "alice/tok-A", "carol/tok-c"}},
		{"a broken file keeps the last", func() { write("[[tokens]\n") }, []string{"ops/tok-ops", "alice/tok-A", "carol/tok-c"}},
		{"removed", func() { os.Remove(file) }, []string{"ops/tok-ops"}},
		{"back", func() { write(entry("dave", "tok-d")) }, []string{"ops/tok-ops", "dave/tok-d"}},
	} {
		before := owners()
		step.do()
		// Within the second since the last look the file is not looked
		// at; past it, the next call looks.
		if got := owners(); !slices.Equal(got, before) {
			t.Fatalf("%s: seen before the recheck: %v", step.name, got)
		}
		time.Sleep(TokenRecheck)
		if got := owners(); !slices.Equal(got, step.want) {
			t.Fatalf("%s: %v a recheck later, want %v", step.name, got, step.want)
		}
	}
}
