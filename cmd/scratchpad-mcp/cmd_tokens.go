package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

func init() {
	commands["tokens"] = command{summary: "count the tokens of files or stdin", example: "scratchpad-mcp tokens --model gpt-4o report.json\ncat log.txt | scratchpad-mcp tokens", run: runTokens}
}

// runTokens prints "<count>\t<name>" per input and a total line, so a user
// can see what a tool output will cost before choosing thresholds.
func runTokens(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tokens", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "", "count as this model would (e.g. gpt-4o, claude-sonnet-4); picks the encoding")
	provider := fs.String("provider", "", "provider of --model (e.g. openai, anthropic, gemini)")
	encoding := fs.String("encoding", "", "encoding: o200k_base, cl100k_base, claude or gemma3 (default: from --model, else o200k_base)")
	atLeast := fs.Int("at-least", 0, "instead of counting, report whether each input has at least `N` tokens (exit 0 if all do, 3 if not)")
	timing := fs.Bool("time", false, "print load and count times and MB/s to stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp tokens [--model M [--provider P] | --encoding E] [--at-least N] [--time] [FILE...|-]")
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
	c := tokens.ForModel("", "") // neither flag: o200k_base, the documented default
	if *encoding != "" {
		var err error
		if c, err = tokens.ForEncoding(*encoding); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp %v\n", err) // err reads "tokens: unknown encoding …"
			return 2
		}
	} else if *model != "" || *provider != "" {
		// A typo must not count silently with o200k_base: refuse it like any
		// other usage error, naming what is known.
		var err error
		if c, err = tokens.LookupModel(*provider, *model); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp %v\n", err) // err reads "tokens: unknown model …"
			return 2
		}
	}
	files := fs.Args()
	if len(files) == 0 {
		files = []string{"-"}
	}
	t0 := time.Now()
	c.Count(nil) // load the encoding now, so the per-file times are counting only
	load := time.Since(t0)
	if *timing {
		fmt.Fprintf(stderr, "encoding %s load_s=%.4f\n", c.Name(), load.Seconds())
	}
	total, status := 0, 0
	for _, f := range files {
		data, err := readInput(f, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp tokens: %v\n", err)
			status = 1
			continue
		}
		start := time.Now()
		if *atLeast > 0 {
			ok := c.AtLeast(data, *atLeast)
			report(stderr, *timing, f, len(data), time.Since(start))
			fmt.Fprintf(stdout, "%v\t%s\n", ok, f)
			if !ok && status == 0 {
				status = 3
			}
			continue
		}
		n := c.Count(data)
		report(stderr, *timing, f, len(data), time.Since(start))
		total += n
		fmt.Fprintf(stdout, "%d\t%s\n", n, f)
	}
	if len(files) > 1 && *atLeast == 0 {
		fmt.Fprintf(stdout, "%d\ttotal\n", total)
	}
	return status
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

func report(w io.Writer, on bool, name string, size int, d time.Duration) {
	if !on {
		return
	}
	mbps := 0.0
	if d > 0 {
		mbps = float64(size) / 1e6 / d.Seconds()
	}
	fmt.Fprintf(w, "%s count_s=%.6f mb_per_s=%.2f\n", name, d.Seconds(), mbps)
}
