package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

func init() {
	commands["tokens"] = command{summary: "count the tokens of files or stdin", run: runTokens}
}

// runTokens prints "<count>\t<name>" per input and a total line, so a user
// can see what a tool output will cost before choosing thresholds.
func runTokens(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokens", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "count as this model would (e.g. gpt-4o, claude-sonnet-4); picks the encoding")
	provider := fs.String("provider", "", "provider of --model (e.g. openai, anthropic)")
	encoding := fs.String("encoding", "", "encoding: o200k_base, cl100k_base or claude (default o200k_base)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp tokens [--model M [--provider P] | --encoding E] [FILE...|-]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *model != "" && *encoding != "" {
		fmt.Fprintln(stderr, "scratchpad-mcp tokens: --model and --encoding are exclusive")
		return 2
	}
	var c *tokens.Counter
	switch {
	case *encoding != "":
		var err error
		if c, err = tokens.ForEncoding(*encoding); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp tokens: %v\n", err)
			return 2
		}
	default:
		c = tokens.ForModel(*provider, *model)
	}
	c.Preload()
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	fmt.Fprintf(stderr, "encoding: %s\n", c.Name())
	total, failed := 0, false
	for _, f := range files {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp tokens: %v\n", err)
			failed = true
			continue
		}
		n := c.Count(data)
		total += n
		fmt.Fprintf(stdout, "%d\t%s\n", n, f)
	}
	if len(files) > 1 {
		fmt.Fprintf(stdout, "%d\ttotal\n", total)
	}
	if failed {
		return 1
	}
	return 0
}
