package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// manifestVersion is the MCP Bundle manifest revision written: the one
// the pinned mcpb CLI (2.1.2) defaults to and Claude Desktop reads.
const manifestVersion = "0.3"

// mcpbCLI is the pinned mcpb CLI, installed by scripts/deps.sh (or make
// mcpb) from this folder's package-lock.json.
func mcpbCLI(root string) (string, error) {
	cli := filepath.Join(root, "scripts", "dist", "node_modules", "@anthropic-ai", "mcpb", "dist", "cli", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("the mcpb CLI is not installed (%s): run scripts/npmci.sh scripts/dist", cli)
	}
	return cli, nil
}

// buildMCPB writes one bundle folder per target under o.out/mcpb (its
// manifest.json, server/ with the binary, NOTICE), packs each with the
// pinned mcpb CLI (which validates the manifest and keeps the binary's
// mode), and writes o.out/mcpb/server.json. It returns the files written.
func buildMCPB(o options) ([]string, error) {
	reg, err := readRegistry(o.root)
	if err != nil {
		return nil, err
	}
	cli, err := mcpbCLI(o.root)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.out, "mcpb")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	tools, err := ownTools()
	if err != nil {
		return nil, err
	}
	var bundles []string
	for _, t := range o.targets {
		bdir := filepath.Join(dir, t.nodeOS()+"-"+t.nodeCPU())
		if _, err := buildBinary(o, t, filepath.Join(bdir, "server")); err != nil {
			return nil, err
		}
		m := manifest(o, reg, t, tools)
		b, err := marshal(m)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(bdir, "manifest.json"), b, 0o644); err != nil {
			return nil, err
		}
		notice, err := os.ReadFile(filepath.Join(o.root, "NOTICE"))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(bdir, "NOTICE"), notice, 0o644); err != nil {
			return nil, err
		}
		file := filepath.Join(dir, fmt.Sprintf("scratchpad-mcp-%s-%s-%s.mcpb", npmVersion(o.version), t.nodeOS(), t.nodeCPU()))
		cmd := exec.Command("node", cli, "pack", bdir, file)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("mcpb pack %s: %w\n%s", bdir, err, out)
		}
		bundles = append(bundles, file)
	}
	sj, err := writeServerJSON(o, reg, bundles, dir)
	if err != nil {
		return nil, err
	}
	return append(bundles, sj), nil
}

// manifest is a bundle's manifest.json for t. The host starts the binary
// with the user's choices at install: the config file (which names the
// MCP servers to proxy) and the memory folder; either may be left blank
// (serve then takes the embedded defaults, or the config's memory_dir).
func manifest(o options, reg *registry, t target, tools []map[string]string) map[string]any {
	entry := "server/" + t.exe()
	return map[string]any{
		"manifest_version": manifestVersion,
		"name":             "scratchpad-mcp",
		"display_name":     "scratchpad-mcp",
		"version":          npmVersion(o.version),
		"description":      reg.Description,
		"long_description": "scratchpad-mcp sits in front of your other MCP servers (named in its config file: `scratchpad-mcp init --from-claude-desktop` writes one from Claude Desktop's config). Every call is forwarded; a result at or above its tool's token threshold is saved in the memory folder and the model gets a short pointer with the data's shape, then reads exactly what it needs with capped exploration tools. A working-memory pad keeps what matters across turns.",
		"author":           map[string]string{"name": "The scratchpad-mcp authors", "url": reg.Repository.URL},
		"repository":       map[string]string{"type": "git", "url": reg.Repository.URL},
		"homepage":         reg.Repository.URL,
		"documentation":    reg.Repository.URL + "#readme",
		"support":          reg.Repository.URL + "/issues",
		"keywords":         []string{"proxy", "context", "large results", "scratchpad"},
		"server": map[string]any{
			"type":        "binary",
			"entry_point": entry,
			"mcp_config": map[string]any{
				"command": "${__dirname}/" + entry,
				"args":    []string{"serve", "--config", "${user_config.config_file}", "--memory-dir", "${user_config.memory_dir}"},
			},
		},
		// The servers the config names add their own tools at run time.
		"tools":           tools,
		"tools_generated": true,
		"compatibility":   map[string]any{"platforms": []string{t.nodeOS()}},
		"user_config": map[string]any{
			"config_file": map[string]any{
				"type":        "file",
				"title":       "Config file",
				"description": "scratchpad.toml naming the MCP servers to put scratchpad-mcp in front of (scratchpad-mcp init writes one from Claude Desktop's config). Blank: no servers, only the exploration and pad tools.",
				"required":    false,
				"default":     "",
			},
			"memory_dir": map[string]any{
				"type":        "directory",
				"title":       "Memory folder",
				"description": "Where large results and the pad are kept. Blank: the config's memory_dir, else ~/.local/share/scratchpad-mcp.",
				"required":    false,
				"default":     "",
			},
		},
	}
}

// ownTools are scratchpad-mcp's own tools as an agent of the default
// role lists them, each with its description's first sentence.
func ownTools() ([]map[string]string, error) {
	cfg := config.Default()
	dir, err := os.MkdirTemp("", "dist-tools-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg.MemoryDir = dir
	reg, err := agents.NewRegistry(agents.Options{Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for _, d := range reg.OwnTools(agents.Identity{Agent: "main", Role: agents.RoleWorker}) {
		desc := d.Description
		if i := strings.Index(desc, ". "); i >= 0 {
			desc = desc[:i+1]
		}
		out = append(out, map[string]string{"name": d.Name, "description": desc})
	}
	return out, nil
}
