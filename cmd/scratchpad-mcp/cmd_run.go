package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

func init() {
	commands["run"] = command{summary: "run delete RUN: remove a run's stored outputs, artifacts and pad together", run: runRun}
}

// runRun is `scratchpad-mcp run delete RUN [--config F] [--owner O] [--yes]`.
func runRun(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file whose memory_dir (and [pad] Redis) the run is in (default: embedded defaults)")
	owner := fs.String("owner", "", "the bearer token owner the run belongs to, if any")
	yes := fs.Bool("yes", false, "remove for real (without it, only say what would be removed)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp run delete RUN [--config FILE] [--owner O] [--yes]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Removes the run's folder ({memory_dir}[/owners/{owner}]/{run}: stored outputs,")
		fmt.Fprintln(stderr, "artifacts, the file pad) and, with [pad] backend = \"redis\", every key of the")
		fmt.Fprintln(stderr, "run's pad. Without --yes it says what it would remove and changes nothing.")
		fs.PrintDefaults()
	}
	var pos []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) != 2 || pos[0] != "delete" {
		fs.Usage()
		return 2
	}
	id, err := (agents.Identity{Run: pos[1], Owner: *owner}).Normalize()
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp run delete: %v\n", err)
		return 2
	}
	cfg, err := loadConfig(*cfgPath)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp run delete: %v\n", err)
		return 2
	}
	code := deleteDir("run", agents.LayoutFor(cfg.MemoryDir, id.Owner).Run(id.Run), *yes, stdout, stderr)
	if cfg.Pad.Backend == config.BackendRedis {
		rd, err := agents.PadRedis(cfg.Pad)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp run delete: %s: %v\n", configName(cfg), err)
			return 2
		}
		defer rd.Close()
		code = max(code, deletePadKeys(rd, agents.PadID(config.ScopeRun, id), *yes, stdout, stderr))
	}
	return code
}
