package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

func init() {
	commands["usage"] = command{summary: "print per-agent token usage from usage.jsonl", example: "scratchpad-mcp usage --config scratchpad.toml --run r1", run: runUsage}
}

func runUsage(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("usage", flag.ContinueOnError)
	flags.SetOutput(stderr)
	run := flags.String("run", "", "show only the agents of this run id")
	memoryDir := flags.String("memory-dir", "", "memory directory holding usage.jsonl (default: the configured memory_dir)")
	cfgPath := flags.String("config", "", "config file whose memory_dir to read (default: embedded defaults)")
	owner := flags.String("owner", "", "the bearer token owner whose agents to show (their records are in {memory_dir}/owners/{owner}/usage.jsonl)")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp usage [--run ID] [--owner O] [--memory-dir DIR | --config FILE]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Prints one row per finished agent that intercepted or extracted anything.")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp usage: unexpected argument %q\n", flags.Arg(0))
		return 2
	}
	dir := *memoryDir
	if dir == "" {
		cfg, err := loadConfig(*cfgPath)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp usage: %v\n", err)
			return 2
		}
		dir = cfg.MemoryDir
	}
	if *owner != "" {
		if err := agents.CheckOwner(*owner); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp usage: %v\n", err)
			return 2
		}
	}
	var owners []string
	if *owner == "" {
		owners = ownersWithUsage(dir)
	}
	return printUsage(layout.For(dir, *owner).Usage(), *run, owners, stdout, stderr)
}

// ownersWithUsage names the token owners of memoryDir whose usage.jsonl
// holds something, sorted: with bearer tokens the records are per owner, so
// "no usage recorded" without --owner must say where they are.
func ownersWithUsage(memoryDir string) []string {
	entries, err := os.ReadDir(filepath.Join(memoryDir, layout.OwnersDir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || agents.CheckOwner(e.Name()) != nil {
			continue
		}
		if st, err := os.Stat(layout.For(memoryDir, e.Name()).Usage()); err == nil && st.Size() > 0 {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// printUsage prints the table of path's records; owners, when path has none,
// are the owners that have records, named so the user passes --owner.
func printUsage(path, run string, owners []string, stdout, stderr io.Writer) int {
	records, err := budget.ReadUsage(path, run)
	if (errors.Is(err, fs.ErrNotExist) || err == nil && len(records) == 0) && len(owners) > 0 {
		fmt.Fprintf(stdout, "no usage recorded without an owner (%s); owners with records: %s. Pass --owner NAME, e.g. --owner %s\n",
			path, strings.Join(owners, ", "), owners[0])
		return 0
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stdout, "no usage recorded yet (%s does not exist)\n", path)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "scratchpad-mcp usage: %v\n", err)
		return 1
	case len(records) == 0 && run != "":
		fmt.Fprintf(stdout, "no usage recorded for run %q in %s\n", run, path)
		return 0
	case len(records) == 0:
		fmt.Fprintf(stdout, "no usage recorded yet in %s\n", path)
		return 0
	}
	if err := budget.FormatTable(stdout, records); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp usage: %v\n", err)
		return 1
	}
	return 0
}
