package main

import (
	"context"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// checkPersistence says what each Redis the config names ([cluster],
// [pad]) keeps over its own restart: one that keeps nothing gets a
// WARNING line (a restart would lose budgets, pads, sessions and the
// requestState key without a word); it does not fail the check, as a
// throwaway setup may want exactly that.
func (d *doctor) checkPersistence(cfg *config.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), padCheckWait)
	defer cancel()
	if cfg.Cluster.Enabled() {
		st, err := state.NewRedis(state.RedisOptions{URL: cfg.Cluster.RedisURL, Prefix: cfg.Cluster.Prefix, MemoryDir: cfg.MemoryDir})
		if err != nil {
			d.problem("%s: %v", configName(cfg), err)
			return
		}
		defer st.Close()
		p, err := st.Persistence(ctx)
		switch {
		case err != nil:
			// Unreachable: the start's check says so, once.
		case !p.Durable():
			fmt.Fprintf(d.out, "WARNING: cluster: redis %s: %s: a restart loses budgets' charges, live runs, 2025 sessions, stored outputs, OAuth tokens and the requestState key; turn on appendonly\n", st, p)
		default:
			fmt.Fprintf(d.out, "cluster: redis %s: %s\n", st, p)
		}
		src := "shared on the cluster's Redis (made by the first replica)"
		if cfg.Cluster.StateKey != "" {
			src = fmt.Sprintf("[cluster] state_key (%d previous)", len(cfg.Cluster.PreviousStateKeys))
		}
		fmt.Fprintf(d.out, "cluster: requestState key: %s\n", src)
	}
	if cfg.Pad.Enabled && cfg.Pad.Backend == config.BackendRedis {
		p, err := agents.PadPersistence(ctx, cfg.Pad)
		switch {
		case err != nil:
			// Unreachable: checkPad says so, once.
		case !p.Durable():
			fmt.Fprintf(d.out, "WARNING: pad: redis %s: %s: a restart loses every pad, its ledger and history; turn on appendonly\n", cfg.Pad.RedactedRedisURL(), p)
		default:
			fmt.Fprintf(d.out, "pad: redis %s: %s\n", cfg.Pad.RedactedRedisURL(), p)
		}
	}
}
