package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

func init() {
	commands["run"] = command{summary: "run delete RUN: remove a run's stored outputs, artifacts and pad together", example: "scratchpad-mcp run delete r1 --config scratchpad.toml --yes", run: runRun}
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
		fmt.Fprintln(stderr, "run's pad and its artifacts. Without --yes it says what it would remove and")
		fmt.Fprintln(stderr, "changes nothing.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseMixed(fs, args)
	if !ok {
		return code
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
	code = deleteDir("run", cfg.MemoryDir, layout.For(cfg.MemoryDir, id.Owner).Run(id.Run), *yes, stdout, stderr)
	if cfg.Pad.Backend == config.BackendRedis {
		rd, err := agents.PadRedis(cfg.Pad)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp run delete: %s: %v\n", configName(cfg), err)
			return 2
		}
		defer rd.Close()
		code = max(code, deletePadKeys(rd, layout.PadID(id.Owner, id.Run, ""), *yes, stdout, stderr))
		code = max(code, deleteArtifactsKey(rd, layout.ArtifactsKey(rd.Prefix(), id.Owner, id.Run), *yes, stdout, stderr))
	}
	return code
}

// deleteArtifactsKey removes the hash of a run's artifacts on Redis;
// without yes it says whether it would.
func deleteArtifactsKey(rd *pad.Redis, key string, yes bool, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := rd.Client().HLen(ctx, key).Result()
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp run delete: %s %s: %v\n", rd, key, err)
		return 1
	}
	switch {
	case n == 0:
		fmt.Fprintf(stdout, "nothing to delete: no artifacts at %s on %s\n", key, rd)
	case !yes:
		fmt.Fprintf(stdout, "would delete %s on %s (%d artifacts) (run again with --yes)\n", key, rd, n)
	default:
		if err := rd.Client().Unlink(ctx, key).Err(); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp run delete: %s %s: %v\n", rd, key, err)
			return 1
		}
		fmt.Fprintf(stdout, "deleted %s on %s (%d artifacts)\n", key, rd, n)
	}
	return 0
}
