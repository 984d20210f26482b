// Command scratchpad-mcp is an MCP server that sits between an MCP client and
// the upstream MCP servers it configures, diverts outputs too large for a
// model's context to disk, and serves tools to explore them.
//
// Each subcommand lives in its own file and registers itself in [commands]
// from an init function, so the dispatcher below never changes when one is
// added.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/term"
)

// command runs one subcommand and returns the process exit code.
type command struct {
	summary string
	// example is one or more typical invocations, shown by -h.
	example string
	// noFlags: the command takes no flags (-h prints no flag list).
	noFlags bool
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		if isTerminal(stdin) {
			// A person typed it: serving stdio would wait silently for a
			// client that is not coming.
			usage(stdout)
			fmt.Fprintln(stdout, "\nWith no command and stdin a pipe (an MCP client), it serves MCP on stdio: 'scratchpad-mcp serve'.")
			return 0
		}
		// No subcommand: serve on stdio, what desktop clients spawn.
		args = []string{"serve"}
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	}
	if len(name) > 0 && name[0] == '-' {
		// Flags without a subcommand belong to serve.
		name, args = "serve", append([]string{"serve"}, args...)
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "scratchpad-mcp: unknown command %q\n\n", name)
		usage(stderr)
		return 2
	}
	if len(args) > 1 && isHelp(args[1]) {
		help(name, cmd, stdin, stdout)
		return 0
	}
	return cmd.run(args[1:], stdin, stdout, stderr)
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// help prints what a command does, an example and its flags: the flag
// list is what the command's own flag set prints for -h.
func help(name string, cmd command, stdin io.Reader, w io.Writer) {
	fmt.Fprintf(w, "scratchpad-mcp %s: %s\n", name, cmd.summary)
	if cmd.example != "" {
		fmt.Fprintf(w, "\nExample:\n")
		for _, l := range strings.Split(strings.TrimSpace(cmd.example), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if cmd.noFlags {
		return
	}
	var flags bytes.Buffer
	cmd.run([]string{"-h"}, stdin, &flags, &flags)
	text := flags.String()
	if i := strings.Index(text, "\n"); strings.HasPrefix(text, "Usage of ") && i >= 0 {
		text = text[i+1:] // the flag set's own heading
	}
	if strings.TrimSpace(text) != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", text)
	}
}

// isTerminal reports whether r is a terminal (not a pipe, a file or
// /dev/null).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: scratchpad-mcp <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'scratchpad-mcp <command> -h' for a command's flags.")
}
