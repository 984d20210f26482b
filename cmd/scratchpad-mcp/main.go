// Command scratchpad-mcp is an MCP server that sits between an MCP client and
// the upstream MCP servers it configures, diverts outputs too large for a
// model's context to disk, and serves tools to explore them.
//
// Each subcommand lives in its own file and registers itself in [commands]
// from an init function, so the dispatcher below never changes when one is
// added.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command runs one subcommand and returns the process exit code.
type command struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
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
	return cmd.run(args[1:], stdin, stdout, stderr)
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
