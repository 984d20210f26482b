package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

func init() {
	commands["explore"] = command{summary: "run an exploration tool on a stored output: explore FILE <tool> [key=value ...]", example: "scratchpad-mcp explore ~/.local/share/scratchpad-mcp/scratchpad/k8s-list_pods-1a2b3c4d.json schema\nscratchpad-mcp explore FILE grep pattern=Failed context=2", run: runExplore}
}

// runExplore runs one exploration tool from the shell through explore.Call,
// the code path the MCP tool uses, with the file's directory as read root.
func runExplore(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "", "model provider whose tokenizer counts the result (as [agent] provider)")
	model := fs.String("model", "", "model whose tokenizer counts the result (as [agent] model)")
	maxTokens := fs.Int("max-tokens", explore.DefaultMaxExtractionTokens, "per-call token cap (max_extraction_tokens)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp explore [--max-tokens N] FILE <tool> [key=value ...]")
		fmt.Fprintln(stderr, "tools: head, slice, grep, schema, item_schema, get_in, iterate_over, count_by, read")
		fmt.Fprintln(stderr, "example: scratchpad-mcp explore out.json iterate_over path=$.items fields=id,name limit=5")
		fmt.Fprintln(stderr, "grep over a DIRECTORY searches every file under it")
		fs.PrintDefaults()
	}
	// Flags may come anywhere (explore f.json read --max-tokens 500): every
	// flag here takes a value, so "-x v" and "-x=v" are both moved in front.
	var flagArgs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		flagArgs = append(flagArgs, a)
		if !strings.Contains(a, "=") && i+1 < len(args) && strings.TrimLeft(a, "-") != "h" && strings.TrimLeft(a, "-") != "help" {
			flagArgs = append(flagArgs, args[i+1])
			i++
		}
	}
	if err := fs.Parse(append(flagArgs, rest...)); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() < 2 {
		fs.Usage()
		return 2
	}
	file, tool := fs.Arg(0), fs.Arg(1)
	targs := map[string]any{"file": filepath.Base(file)}
	for _, a := range fs.Args()[2:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			fmt.Fprintf(stderr, "scratchpad-mcp explore: argument %q is not key=value\n", a)
			return 2
		}
		targs[k] = v
	}
	rootDir := filepath.Dir(file)
	if st, err := os.Stat(file); err == nil && st.IsDir() && tool == explore.ToolGrep {
		// grep over a directory: every file under it, as grep without a
		// file searches every stored output.
		delete(targs, "file")
		rootDir = file
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp explore: %v\n", err)
		return 1
	}
	defer root.Close()
	counter := tokens.ForModel(*provider, *model)
	// The answer is counted after the file is indexed: load the encoding
	// on the other core meanwhile.
	counter.Preload()
	env := &explore.Env{Root: root, Count: counter.CountString, MaxExtractionTokens: *maxTokens, MapFiles: true}
	// A file truncated while mapped faults: a panic the call recovers
	// into an internal_error instead of a crash.
	debug.SetPanicOnFault(true)
	res := explore.Call(context.Background(), env, tool, targs)
	fmt.Fprintln(stdout, res.Text)
	if res.IsError || strings.HasPrefix(res.Text, `{"error":`) {
		return 1
	}
	return 0
}
