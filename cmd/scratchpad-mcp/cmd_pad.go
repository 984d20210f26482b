package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

func init() {
	commands["pad"] = command{summary: "inspect, repair or delete a scratchpad: show|validate|diff|history|restore|edit|snapshot|snapshots|delete", example: "scratchpad-mcp pad show --config scratchpad.toml\nscratchpad-mcp pad history --config scratchpad.toml --run r1", run: runPad}
}

func runPad(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pad", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "pad directory: {memory_dir}/pad, or {memory_dir}/{run_id}/pad for a run")
	cfgPath := fs.String("config", "", "config file: the pad is the one the server gives --agent (or the run's with --run), with its [pad] settings")
	run := fs.String("run", "", "with --config: the run whose shared pad to open ([pad] scope = \"run\")")
	agent := fs.String("agent", layout.DefaultAgent, "with --config, no --run: the agent whose own pad to open")
	owner := fs.String("owner", "", "with --config: the bearer token owner the agent or run belongs to, if any")
	format := fs.String("format", "", "the pad's storage format: markdown (default) or json")
	render := fs.String("render", "", "how show renders: markdown (default), xml, json or kv")
	n := fs.Int("n", 1, "diff: show the Nth last change")
	yes := fs.Bool("yes", false, "delete: remove for real (without it, delete only says what it would remove)")
	keys := fs.Bool("keys", false, "history, diff, restore N: the keyed values' history instead of the document's")
	memPath := fs.String("memory", "", "show, history, diff, restore N: the memory file at PATH as the model names it (/memories/notes.md; show: a folder too)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: scratchpad-mcp pad {%s|snapshot|snapshots|delete} (--dir DIR | --config FILE [--run ID | --agent NAME] [--owner O]) [-n N | N | NAME] [--keys | --memory PATH] [--yes]\n\n", strings.Join(pad.Commands, "|"))
		fmt.Fprintln(stderr, "  show       print the rendered pad (a fresh path prints the empty structure and creates nothing),")
		fmt.Fprintln(stderr, "             then the /memories listing when its storage holds memory files (not with render json or xml)")
		fmt.Fprintln(stderr, "  validate   parse and report, change nothing; exit 1 if broken")
		fmt.Fprintln(stderr, "  diff       the Nth last change from history (-n N, default 1)")
		fmt.Fprintln(stderr, "  history    list saved versions, newest first")
		fmt.Fprintln(stderr, "  restore N  make version N current (saved as a new version)")
		fmt.Fprintln(stderr, "  restore NAME  make snapshot NAME current (sections/state and keys; recorded in history and the ledger)")
		fmt.Fprintln(stderr, "  snapshot NAME  save the whole pad (sections/state, keys, ledger position) as NAME")
		fmt.Fprintln(stderr, "  snapshots  list the snapshot names")
		fmt.Fprintln(stderr, "  history|diff|restore N --keys  the same on the keyed values' history")
		fmt.Fprintln(stderr, "  show|history|diff|restore N --memory PATH  a memory file's content and versions (a deleted file's too)")
		fmt.Fprintln(stderr, "  edit       open $EDITOR on a copy; saved only if it parses")
		fmt.Fprintln(stderr, "  delete     remove every trace of the pad (its folder, or every Redis key); only with --yes")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	pos, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		fs.Usage()
		return 2
	}
	sub, pos := pos[0], pos[1:]
	num := *n
	snapName := ""
	if sub == "snapshot" || (sub == "restore" && len(pos) == 1 && !isNumber(pos[0])) {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "scratchpad-mcp pad snapshot: want one snapshot name")
			return 2
		}
		snapName = pos[0]
	} else if sub == "restore" || (sub == "diff" && len(pos) == 1) {
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "scratchpad-mcp pad restore: want one version number (see pad history)")
			return 2
		}
		v, err := strconv.Atoi(pos[0])
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp pad %s: %q is not a version number\n", sub, pos[0])
			return 2
		}
		num = v
	} else if len(pos) != 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp pad %s: unexpected argument %q\n", sub, pos[0])
		return 2
	}
	opts := pad.Options{Format: *format, Render: *render}
	var memOpts pad.MemoryOptions // [memory]'s with --config
	var p *pad.Pad
	top := "" // the tree the pad's folder is in: memory_dir with --config, the folder itself with --dir
	switch {
	case *dir != "" && *cfgPath != "":
		fmt.Fprintln(stderr, "scratchpad-mcp pad: give --dir or --config, not both")
		return 2
	case *cfgPath != "":
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp pad: %v\n", err)
			return 2
		}
		if opts, err = agents.PadOptions(cfg.Pad); err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp pad: %v\n", err)
			return 2
		}
		if *render != "" {
			opts.Render = *render
		}
		memOpts = agents.MemoryStoreOptions(cfg.Memory)
		id, err := (agents.Identity{Run: *run, Agent: *agent, Owner: *owner}).Normalize()
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp pad: %v\n", err)
			return 2
		}
		// The same pad the server gives that agent or run: the run's with
		// --run, the agent's own without.
		if cfg.Pad.Backend == config.BackendRedis {
			rd, err := agents.PadRedis(cfg.Pad)
			if err != nil {
				fmt.Fprintf(stderr, "scratchpad-mcp pad: %s: %v\n", configName(cfg), err)
				return 2
			}
			defer rd.Close()
			if sub == "delete" {
				return deletePadKeys(rd, layout.PadID(id.Owner, id.Run, id.Agent), *yes, stdout, stderr)
			}
			if p, err = rd.Open(layout.PadID(id.Owner, id.Run, id.Agent), opts); err != nil {
				fmt.Fprintf(stderr, "scratchpad-mcp pad: %v\n", err)
				return 2
			}
			break
		}
		*dir = layout.For(cfg.MemoryDir, id.Owner).Pad(id.Run, id.Agent)
		top = cfg.MemoryDir
	case *dir == "":
		fmt.Fprintln(stderr, "scratchpad-mcp pad: --dir or --config is required")
		return 2
	}
	if sub == "delete" {
		return deleteDir("pad", top, *dir, *yes, stdout, stderr)
	}
	if p == nil {
		d, err := memdir.In(top, *dir)
		if err == nil {
			p, err = pad.OpenIn(d, opts)
		}
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp pad: %v\n", err)
			return 2
		}
	}
	if *memPath != "" {
		if snapName != "" {
			fmt.Fprintf(stderr, "scratchpad-mcp pad restore --memory: want a version number (see pad history --memory %s), not %q\n", *memPath, snapName)
			return 2
		}
		return pad.MemoryCommand(p, memOpts, sub, *memPath, num, stdout, stderr)
	}
	if *keys {
		return pad.KeysCommand(p, sub, num, stdout, stderr)
	}
	if snapName != "" || sub == "snapshots" {
		return pad.SnapshotCommand(p, sub, snapName, stdout, stderr)
	}
	code = pad.Command(p, sub, num, pad.CommandIO{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if sub == "show" && code == 0 {
		code = showMemories(p, memOpts, opts.Render, stdout, stderr)
	}
	return code
}

// showMemories follows `pad show`'s rendering with the listing of the
// memory files its storage holds, as the model's view of /memories gives
// it, when there is one: a blank line, then the listing. Not after a
// json or xml rendering, which a program reads whole (`pad show --memory
// /memories` prints the listing alone).
func showMemories(p *pad.Pad, o pad.MemoryOptions, render string, stdout, stderr io.Writer) int {
	if render == pad.RenderJSON || render == pad.RenderXML {
		return 0
	}
	files, err := p.Memory(o).Files()
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp pad show: /memories: %v\n", err)
		return 1
	}
	if len(files) == 0 {
		return 0
	}
	fmt.Fprintln(stdout)
	return pad.MemoryCommand(p, o, "show", memory.Root, 0, stdout, stderr)
}

// deletePadKeys removes every key of a pad on Redis; without yes it lists
// them and removes nothing.
func deletePadKeys(rd *pad.Redis, id string, yes bool, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	keys, err := rd.Keys(ctx, id)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp pad delete: %v\n", err)
		return 1
	}
	if len(keys) == 0 {
		fmt.Fprintf(stdout, "nothing to delete: no key of pad %s on %s\n", id, rd)
		return 0
	}
	if !yes {
		fmt.Fprintf(stdout, "would delete %d keys of pad %s on %s (run again with --yes):\n", len(keys), id, rd)
		for _, k := range keys {
			fmt.Fprintf(stdout, "  %s\n", k)
		}
		return 0
	}
	gone, err := rd.Delete(ctx, id)
	fmt.Fprintf(stdout, "deleted %d keys of pad %s on %s\n", len(gone), id, rd)
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp pad delete: %v\n", err)
		return 1
	}
	return 0
}

// deleteDir removes a folder and everything in it; without yes it says
// what it would remove and removes nothing. what names the command
// ("pad", "run") in messages. The folder is reached through an os.Root on
// top (memory_dir; "" for the folder's parent, a --dir given by hand), so
// a link planted on the way that leads out of memory_dir removes nothing
// there, and links inside are removed, not followed.
func deleteDir(what, top, dir string, yes bool, stdout, stderr io.Writer) int {
	if top == "" {
		top = filepath.Dir(filepath.Clean(dir))
	}
	d, err := memdir.In(top, dir)
	files, size := 0, int64(0)
	var root *os.Root
	if err == nil {
		root, err = d.OpenRoot()
	}
	if err == nil {
		err = fs.WalkDir(root.FS(), ".", func(_ string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !e.IsDir() {
				files++
				if fi, err := e.Info(); err == nil {
					size += fi.Size()
				}
			}
			return nil
		})
		root.Close()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintf(stdout, "nothing to delete: %s does not exist\n", dir)
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "scratchpad-mcp %s delete: %v\n", what, err)
		return 1
	case !yes:
		fmt.Fprintf(stdout, "would delete %s (%d files, %d bytes) (run again with --yes)\n", dir, files, size)
		return 0
	}
	if err := d.RemoveAll(""); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp %s delete: %v\n", what, err)
		return 1
	}
	fmt.Fprintf(stdout, "deleted %s (%d files, %d bytes)\n", dir, files, size)
	return 0
}

// isNumber tells `pad restore N` (a history version) from `pad restore
// NAME` (a snapshot; names start with a letter).
func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
