package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// TestRedaction: [redaction] and a server's redaction key, decoded, their
// defaults, and Options building a working redactor.
func TestRedaction(t *testing.T) {
	c, err := Parse("", []byte(""), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Redaction, Redaction{Mode: RedactMask}) {
		t.Fatalf("defaults: %+v", c.Redaction)
	}
	c, err = Parse("", []byte(`[redaction]
mode = "flag"
entropy = true
fingerprint_key = "{{ env.FP_KEY }}"
allow = ['^ghp_0+$', "EXAMPLE"]
extra_patterns = [
  { id = "acme-key", regex = 'ACME-[0-9A-F]{16}' },
  { id = "ticket", regex = 'ticket=([a-z]{12})', keywords = ["ticket="] },
]

[mcp.servers.fs]
cmd = "server-filesystem"
redaction = "off"

[mcp.servers.gh]
cmd = "server-github"
`), testEnv(map[string]string{"FP_KEY": "k3y"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Redaction{Mode: RedactFlag, Entropy: true, FingerprintKey: "k3y", Allow: []string{"^ghp_0+$", "EXAMPLE"},
		ExtraPatterns: []redact.Pattern{{ID: "acme-key", Regex: "ACME-[0-9A-F]{16}"}, {ID: "ticket", Regex: "ticket=([a-z]{12})", Keywords: []string{"ticket="}}}}
	if !reflect.DeepEqual(c.Redaction, want) {
		t.Fatalf("got  %+v\nwant %+v", c.Redaction, want)
	}
	if m := c.RedactionMode(&c.Servers[0]); m != RedactOff {
		t.Errorf("fs: %q", m)
	}
	if m := c.RedactionMode(&c.Servers[1]); m != RedactFlag {
		t.Errorf("gh: %q", m)
	}
	r, err := redact.New(c.Redaction.Options())
	if err != nil {
		t.Fatal(err)
	}
	_, rep, _ := r.With(redact.Mask).String("ACME-0123456789ABCDEF ticket=abcdefghijkl")
	if rep.Counts["acme-key"] != 1 || rep.Counts["ticket"] != 1 {
		t.Errorf("the configured patterns found %v", rep.Counts)
	}
}

// TestRedactionErrors: every bad value is reported at its file:line:col
// with its key, a bad regexp naming the pattern.
func TestRedactionErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"[redaction]\nmode = \"hide\"\n", `cfg.toml:2:1: redaction.mode: invalid value "hide": want one of "mask", "flag", "off"`},
		{"[redaction]\nmod = \"mask\"\n", `cfg.toml:2:1: redaction.mod: unknown key "mod" (did you mean "mode"?)`},
		{"[redaction]\nextra_patterns = [{ id = \"x\", regex = 'ab(c' }]\n", `cfg.toml:2:39: redaction.extra_patterns[0].regex: invalid pattern "ab(c": invalid redaction pattern: missing closing ): ab(c`},
		{"[redaction]\nextra_patterns = [{ id = \"x\", regex = '.*' }]\n", `redaction.extra_patterns[0].regex: invalid pattern ".*": invalid redaction pattern: it matches the empty string`},
		{"[redaction]\nextra_patterns = [{ id = \"Bad Id\", regex = 'abc' }]\n", `redaction.extra_patterns[0].id: invalid id "Bad Id"`},
		{"[redaction]\nextra_patterns = [{ id = \"jwt\", regex = 'abc' }]\n", `redaction.extra_patterns[0].id: id "jwt" is a built-in rule's`},
		{"[redaction]\nextra_patterns = [{ id = \"a\", regex = 'abc' }, { id = \"a\", regex = 'abd' }]\n", `redaction.extra_patterns[1].id: duplicate id "a" (also redaction.extra_patterns[0].id)`},
		{"[redaction]\nextra_patterns = [{ regex = 'abc', keyword = [\"a\"] }]\n", `redaction.extra_patterns[0].keyword: unknown key "keyword" (did you mean "keywords"?)`},
		{"[redaction]\nextra_patterns = [{ regex = 'abc' }]\n", `redaction.extra_patterns[0].id: required`},
		{"[redaction]\nallow = ['[z-a]']\n", `cfg.toml:2:10: redaction.allow[0]: invalid pattern "[z-a]": invalid redaction pattern: invalid character class range: z-a`},
		{"[redaction]\nentropy = \"yes\"\n", `redaction.entropy: want true or false, got string`},
		{"[mcp.servers.fs]\ncmd = \"x\"\nredaction = \"hide\"\n", `cfg.toml:3:1: mcp.servers.fs.redaction: invalid value "hide": want one of "mask", "flag", "off"`},
		{"[mcp.servers.fs]\ncmd = \"x\"\nredacton = \"off\"\n", `mcp.servers.fs.redacton: unknown key "redacton" (did you mean "redaction"?)`},
	} {
		_, err := Parse("cfg.toml", []byte(tc.src), testEnv(nil))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
