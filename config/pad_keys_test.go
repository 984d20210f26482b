package config

import (
	"strings"
	"testing"
	"time"
)

// [pad] keys of issue 16: default_ttl, header, read_only, template, and
// render = "kv".
func TestPadKeyedValueSettings(t *testing.T) {
	src := "[pad]\nrender = \"kv\"\ndefault_ttl = \"10m\"\nheader = \"Incident 4711\"\nread_only = true\ntemplate = \"\"\"\n## Task\nship v2\n\"\"\"\n"
	c, err := Parse("t.toml", []byte(src), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pad
	if p.Render != RenderKV || p.DefaultTTL != 10*time.Minute || p.Header != "Incident 4711" || !p.ReadOnly || p.Template != "## Task\nship v2\n" {
		t.Fatalf("pad = %+v", p)
	}
	for src, want := range map[string]string{
		"header = \"a\\nb\"":     "pad.header: one line",
		"default_ttl = \"soon\"": "pad.default_ttl",
		"read_only = \"yes\"":    "pad.read_only",
		"render = \"yaml\"":      "pad.render",
	} {
		if _, err := Parse("t.toml", []byte("[pad]\n"+src+"\n"), testEnv(nil)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", src, err, want)
		}
	}
}
