package pad

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// CommandIO is where a CLI command reads and writes.
type CommandIO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Editor is the command edit runs; "" means $VISUAL, then $EDITOR,
	// then vi. It is run by sh, so it may carry arguments ("code -w").
	Editor string
}

// Commands lists the subcommands [Command] accepts, for usage text.
var Commands = []string{"show", "validate", "diff", "history", "restore", "edit"}

// Command runs one `scratchpad-mcp pad` subcommand on p and returns the
// process exit code: 0 success, 1 failure (including a pad that does not
// validate), 2 misuse. n is the version number for diff and restore.
func Command(p *Pad, sub string, n int, cio CommandIO) int {
	fail := func(err error) int {
		fmt.Fprintf(cio.Stderr, "scratchpad-mcp pad %s: %v\n", sub, err)
		return 1
	}
	switch sub {
	case "show":
		out, err := p.Show()
		if err != nil {
			return fail(err)
		}
		fmt.Fprint(cio.Stdout, out)
	case "validate":
		r, err := p.Validate()
		if err != nil {
			return fail(err)
		}
		state := "ok"
		if !r.Exists {
			state = "ok (no pad file yet)"
		}
		fmt.Fprintf(cio.Stdout, "%s: %s; ledger: %d entries", r.File, state, r.Entries)
		if r.BadLines > 0 {
			fmt.Fprintf(cio.Stdout, ", %d unreadable lines", r.BadLines)
		}
		fmt.Fprintln(cio.Stdout)
		for _, w := range r.Warnings {
			fmt.Fprintf(cio.Stdout, "warning: %s\n", w)
		}
		for _, b := range r.Broken {
			fmt.Fprintf(cio.Stdout, "broken: %s\n", b)
		}
		if len(r.Broken) > 0 {
			return 1
		}
	case "diff":
		d, err := p.Diff(n)
		if err != nil {
			return fail(err)
		}
		if d == "" {
			d = "(no difference)\n"
		}
		fmt.Fprint(cio.Stdout, d)
	case "history":
		if err := writeHistory(p, cio.Stdout); err != nil {
			return fail(err)
		}
	case "restore":
		res, err := p.Restore(n)
		if err != nil {
			return fail(err)
		}
		writeResult(cio.Stdout, res)
	case "edit":
		res, err := p.Edit(cio)
		if err != nil {
			return fail(err)
		}
		writeResult(cio.Stdout, res)
	default:
		fmt.Fprintf(cio.Stderr, "scratchpad-mcp pad: unknown subcommand %q (want one of %s)\n", sub, strings.Join(Commands, ", "))
		return 2
	}
	return 0
}

func writeResult(w io.Writer, res *Result) {
	fmt.Fprint(w, formatResult(res))
}

func writeHistory(p *Pad, w io.Writer) error {
	versions, err := p.store.history(0)
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		fmt.Fprintln(w, "no history yet")
		return nil
	}
	cur, _, _ := p.store.readDoc()
	fmt.Fprintf(w, "%3s  %-24s  %7s\n", "N", "saved (UTC)", "bytes")
	for _, v := range versions {
		mark := ""
		if data, err := v.read(); err == nil && cur != nil && bytes.Equal(data, cur) {
			mark = "  (current)"
		}
		fmt.Fprintf(w, "%3d  %-24s  %7d%s\n", v.N, v.Time.Format("2006-01-02T15:04:05.000Z"), v.Size, mark)
	}
	return nil
}

// Edit opens an editor on a copy of the pad, validates the copy when the
// editor exits and saves it only if it parses. A refused edit is kept and
// its path given in the error, so no typing is lost.
func (p *Pad) Edit(cio CommandIO) (*Result, error) {
	editor := cio.Editor
	for _, env := range []string{"VISUAL", "EDITOR"} {
		if editor == "" {
			editor = os.Getenv(env)
		}
	}
	if editor == "" {
		editor = "vi"
	}
	text, err := p.Text()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "scratchpad-edit-*"+p.ext)
	if err != nil {
		return nil, fmt.Errorf("pad: create edit copy: %w", err)
	}
	path := f.Name()
	_, werr := f.Write(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("pad: write edit copy: %w", werr)
	}
	before, _ := os.Stat(path)
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = cio.Stdin, cio.Stdout, cio.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("pad: editor %q: %w (your copy is %s)", editor, err, path)
	}
	edited, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pad: read edit copy: %w", err)
	}
	if after, _ := os.Stat(path); bytes.Equal(edited, text) && before != nil && after != nil && after.ModTime().Equal(before.ModTime()) {
		os.Remove(path)
		return &Result{}, nil
	}
	res, err := p.Save(edited)
	if err != nil {
		var perr *ParseError
		if errors.As(err, &perr) {
			perr.File = path
		}
		return nil, fmt.Errorf("refusing to save: %w; nothing changed, your edit is kept at %s", err, path)
	}
	os.Remove(path)
	return res, nil
}
