package pad

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCommand(p *Pad, sub string, n int, editor string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Command(p, sub, n, CommandIO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Editor: editor})
	return code, out.String(), errOut.String()
}

func TestCommand(t *testing.T) {
	p := newPad(t, Options{})
	mustUpdate(t, p, Patch{Section: "Task", Op: OpReplace, Content: "v1"})
	mustUpdate(t, p, Patch{Section: "Task", Op: OpReplace, Content: "v2"})

	tests := []struct {
		sub      string
		n        int
		code     int
		contains string
	}{
		{"show", 0, 0, "## Task\nv2"},
		{"validate", 0, 0, "pad.md: ok; ledger: 0 entries"},
		{"diff", 1, 0, "-v1\n+v2\n"},
		{"diff", 2, 0, "+## Task\n+v1\n"},
		{"diff", 3, 1, "no such history version: 3 (history has 2)"},
		{"history", 0, 0, "(current)"},
		{"nope", 0, 2, `unknown subcommand "nope"`},
	}
	for _, tt := range tests {
		code, out, errOut := runCommand(p, tt.sub, tt.n, "")
		if code != tt.code || !strings.Contains(out+errOut, tt.contains) {
			t.Errorf("%s %d: exit %d, out %q, err %q; want exit %d containing %q", tt.sub, tt.n, code, out, errOut, tt.code, tt.contains)
		}
	}

	code, out, _ := runCommand(p, "restore", 2, "")
	if code != 0 || !strings.Contains(out, "-v2\n+v1\n") || !strings.Contains(readFile(t, p.Path()), "## Task\nv1\n") {
		t.Fatalf("restore: %d %s", code, out)
	}

	os.WriteFile(p.Path(), fixture(t, "broken-unknown.md"), 0o644)
	code, _, errOut := runCommand(p, "validate", 0, "")
	if code != 1 || !strings.Contains(errOut, `unknown section heading "Vibes"`) {
		t.Fatalf("validate broken: %d %s", code, errOut)
	}
	if readFile(t, p.Path()) != string(fixture(t, "broken-unknown.md")) {
		t.Fatal("validate changed the file")
	}
}

func TestEdit(t *testing.T) {
	p := newPad(t, Options{})
	mustUpdate(t, p, Patch{Section: "Next", Op: OpReplace, Content: "old next"})
	script := filepath.Join(t.TempDir(), "ed.sh")

	os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/old next/new next/' \"$1\"\n"), 0o755)
	code, out, errOut := runCommand(p, "edit", 0, script)
	if code != 0 || !strings.Contains(out, "-old next\n+new next\n") {
		t.Fatalf("edit: %d %q %q", code, out, errOut)
	}

	before := readFile(t, p.Path())
	os.WriteFile(script, []byte("#!/bin/sh\nprintf '## Vibes\\nfine\\n' >> \"$1\"\n"), 0o755)
	code, _, errOut = runCommand(p, "edit", 0, script)
	if code != 1 || !strings.Contains(errOut, "refusing to save") || !strings.Contains(errOut, `unknown section heading "Vibes"`) {
		t.Fatalf("broken edit: %d %q", code, errOut)
	}
	if readFile(t, p.Path()) != before {
		t.Fatal("a broken edit was saved")
	}
	kept := errOut[strings.LastIndex(errOut, "kept at ")+len("kept at "):]
	kept = strings.TrimSpace(kept)
	if !strings.Contains(readFile(t, kept), "## Vibes") {
		t.Fatalf("the refused edit was not kept at %q", kept)
	}
	os.Remove(kept)

	os.WriteFile(script, []byte("#!/bin/sh\ntrue\n"), 0o755)
	code, out, _ = runCommand(p, "edit", 0, script)
	if code != 0 || out != "no change\n" {
		t.Fatalf("untouched edit: %d %q", code, out)
	}
}
