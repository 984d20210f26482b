package config

import (
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	env := map[string]string{"HOST": "example.com", "EMPTY": "", "N_1": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"{{ env.HOST }}", "example.com", ""},
		{"{{env.HOST}}", "example.com", ""},
		{"https://{{ env.HOST }}:{{ env.N_1 }}/x", "https://example.com:x/x", ""},
		{"{{ env.MISSING | default: 'fb' }}", "fb", ""},
		{`{{ env.MISSING | default: "fb" }}`, "fb", ""},
		{"{{ env.MISSING|default:'' }}", "", ""},
		{"{{ env.MISSING | default: 'a b: c|d' }}", "a b: c|d", ""},
		{"{{ env.HOST | default: 'fb' }}", "example.com", ""},
		{"{{ env.EMPTY | default: 'fb' }}", "fb", ""},
		{"{{ env.EMPTY }}", "", ""},
		{"{{.metadata.name}}", "{{.metadata.name}}", ""},
		{"{{ other }} and {{ env.HOST }}", "{{ other }} and example.com", ""},
		{"{{", "{{", ""},
		{"{{ env.MISSING }}", "", "environment variable MISSING is not set"},
		{"{{ env.HOST", "", "unclosed"},
		{"{{ env. }}", "", "want {{ env.NAME }}"},
		{"{{ env.1X }}", "", "want {{ env.NAME }}"},
		{"{{ env.HOST-NAME }}", "", "want only | default"},
		{"{{ env.HOST | upper }}", "", "unknown filter"},
		{"{{ env.HOST | default 'x' }}", "", "want only | default"},
		{"{{ env.HOST | default: x }}", "", "must be quoted"},
		{"{{ env.HOST | default: 'x\" }}", "", "must be quoted"},
		{"{{ env.HOST | default: 'a'b' }}", "", "want only | default"},
	}
	for _, tt := range tests {
		got, err := interpolate(tt.in, lookup)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("interpolate(%q) err = %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("interpolate(%q) unexpected error %v", tt.in, err)
		case tt.err == "" && got != tt.want:
			t.Errorf("interpolate(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"server", []string{"server"}, false},
		{"  npx  -y\tpkg ", []string{"npx", "-y", "pkg"}, false},
		{`python "my server.py" --name 'a b'`, []string{"python", "my server.py", "--name", "a b"}, false},
		{`a\ b c`, []string{"a b", "c"}, false},
		{`"say \"hi\"" 'lit\'`, []string{`say "hi"`, `lit\`}, false},
		{`x""`, []string{"x"}, false},
		{`""`, []string{""}, false},
		{"", nil, false},
		{"'open", nil, true},
		{`"open`, nil, true},
	}
	for _, tt := range tests {
		got, err := splitWords(tt.in)
		if (err != nil) != tt.err || strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q, err=%v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
