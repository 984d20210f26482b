package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/retention"
)

func init() {
	commands["gc"] = command{summary: "apply [retention] to memory_dir now and print what was removed (--dry-run: what would be)", example: "scratchpad-mcp gc --config scratchpad.toml --dry-run\nscratchpad-mcp gc --config scratchpad.toml", run: runGC}
}

// policy maps [retention] to the sweep's policy.
func policy(r config.Retention) retention.Policy {
	return retention.Policy{
		MaxAge: r.MaxAge, RunsMaxAge: r.RunsMaxAge, MaxBytes: r.MaxBytes,
		UsageMaxBytes: r.UsageMaxBytes, UsageKeep: r.UsageKeep,
	}
}

func runGC(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file (TOML); empty: embedded defaults")
	dry := fs.Bool("dry-run", false, "only print what would be removed")
	timeout := fs.Duration("timeout", 0, "bound on the sweep (default: none; serve uses [retention] sweep_timeout)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp gc: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp gc:", err)
		return 1
	}
	// No live sessions are known here: what a server in another process
	// uses is kept only as far as it is young (a run it writes to, an
	// output pointed to again is touched).
	rep, err := retention.Sweep(context.Background(), cfg.MemoryDir, retention.Options{
		Policy: policy(cfg.Retention), Budget: *timeout, DryRun: *dry,
	})
	if err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp gc:", err)
		return 1
	}
	if *dry {
		fmt.Fprintf(stdout, "memory_dir %s (dry run: nothing removed)\n\n", cfg.MemoryDir)
	} else {
		fmt.Fprintf(stdout, "memory_dir %s\n\n", cfg.MemoryDir)
	}
	printSweep(stdout, rep, *dry)
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}

// printSweep prints, by kind, what memory_dir holds (before a dry run,
// after a real sweep: what was scanned less what went) and what the sweep
// removed (or would), then the reasons.
func printSweep(w io.Writer, rep *retention.Report, dry bool) {
	counts, bytes := rep.Inventory.Counts(), rep.Inventory.Bytes()
	if !dry {
		for k, g := range rep.Plan.Gone {
			counts[k] -= g.Files
			bytes[k] -= g.Bytes
		}
	}
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	label := "kept"
	if dry {
		label = "now"
	}
	freeing := "freed"
	if dry {
		freeing = "would free"
	}
	fmt.Fprintf(tw, "kind\t%s files\t%s size\t%s\t%s\t\n", label, label, verb, freeing)
	var tf, tg int
	var tb, tgb int64
	for _, k := range layout.Kinds {
		g := rep.Plan.Gone[k]
		if counts[k] == 0 && g.Files == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t\n", k, counts[k], config.SizeText(bytes[k]), g.Files, config.SizeText(g.Bytes))
		tf, tb, tg, tgb = tf+counts[k], tb+bytes[k], tg+g.Files, tgb+g.Bytes
	}
	fmt.Fprintf(tw, "total\t%d\t%s\t%d\t%s\t\n", tf, config.SizeText(tb), tg, config.SizeText(tgb))
	tw.Flush()

	byReason := map[string]retention.Tally{}
	for _, a := range rep.Plan.Actions {
		t := byReason[a.Reason]
		t.Files += a.Files
		t.Bytes += a.Bytes
		byReason[a.Reason] = t
	}
	if len(byReason) > 0 {
		fmt.Fprintln(w)
		reasons := make([]string, 0, len(byReason))
		for r := range byReason {
			reasons = append(reasons, r)
		}
		slices.Sort(reasons)
		for _, r := range reasons {
			t := byReason[r]
			fmt.Fprintf(w, "%-13s %d file(s), %s\n", r+":", t.Files, config.SizeText(t.Bytes))
		}
	}
	if !dry {
		fmt.Fprintf(w, "\nremoved %d file(s), freed %s in %s", rep.Removed, config.SizeText(rep.Freed), rep.Duration.Round(time.Millisecond))
		if rep.Skipped > 0 {
			fmt.Fprintf(w, "; kept %d in use since the scan", rep.Skipped)
		}
		fmt.Fprintln(w)
	}
	if rep.Stopped {
		fmt.Fprintln(w, "stopped at the time bound: the rest waits for the next sweep")
	}
	if rep.Plan.Over > 0 {
		fmt.Fprintf(w, "still %s over max_bytes: nothing else may go (pads, artifacts and live files are kept)\n", config.SizeText(rep.Plan.Over))
	}
	for _, err := range rep.Errors {
		fmt.Fprintln(w, "error:", err)
	}
}

// human formats a byte count with binary units.
// sweepOnce runs one sweep under [retention] with the live agents' guard
// and logs what it did.
func sweepOnce(ctx context.Context, log *slog.Logger, cfg *config.Config, g retention.Guard, why string) {
	rep, err := retention.Sweep(ctx, cfg.MemoryDir, retention.Options{
		Policy: policy(cfg.Retention), Guard: g, Budget: cfg.Retention.SweepTimeout,
	})
	switch {
	case errors.Is(err, retention.ErrBusy):
		log.Info("retention sweep skipped: another is running", "when", why)
		return
	case err != nil:
		log.Warn("retention sweep failed", "when", why, "error", err)
		return
	}
	attrs := []any{"when", why, "removed", rep.Removed, "freed", rep.Freed, "elapsed", rep.Duration.Round(time.Millisecond).String()}
	for _, k := range layout.Kinds {
		if g := rep.Plan.Gone[k]; g.Files > 0 {
			attrs = append(attrs, k, g.Files)
		}
	}
	if rep.Skipped > 0 {
		attrs = append(attrs, "kept_in_use", rep.Skipped)
	}
	if rep.Stopped {
		attrs = append(attrs, "stopped", true)
	}
	if rep.Plan.Over > 0 {
		attrs = append(attrs, "over_max_bytes", rep.Plan.Over)
	}
	if len(rep.Errors) > 0 {
		attrs = append(attrs, "errors", len(rep.Errors), "first_error", rep.Errors[0].Error())
		log.Warn("retention sweep", attrs...)
		return
	}
	log.Info("retention sweep", attrs...)
}

// sweeper sweeps at once and then every [retention] interval until ctx
// ends; it returns when the running sweep has ended.
func (a *app) sweeper(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	if !a.cfg.Retention.Enabled {
		close(done)
		return func() {}
	}
	go func() {
		defer close(done)
		sweepOnce(ctx, a.log, a.cfg, a.agents, "start")
		t := time.NewTicker(a.cfg.Retention.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				sweepOnce(ctx, a.log, a.cfg, a.agents, "periodic")
			}
		}
	}()
	return func() { <-done }
}
