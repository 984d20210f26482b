package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// requestStateKeys are the keys that seal the requestState this server
// hands to 2026-07-28 clients ([server.Options].StateKeys), and where
// they come from, for the start line: [cluster] state_key (and the
// previous keys still opening states); without it, in replica mode, one
// key the first replica makes on the cluster's Redis and every other
// one reads (a retry reaches any replica); otherwise none (a random key
// of this process).
func requestStateKeys(ctx context.Context, c config.Cluster, st state.Store) (keys [][]byte, source string, err error) {
	if c.StateKey != "" {
		keys = append(keys, []byte(c.StateKey))
		for _, k := range c.PreviousStateKeys {
			keys = append(keys, []byte(k))
		}
		return keys, fmt.Sprintf("[cluster] state_key (%d previous)", len(c.PreviousStateKeys)), nil
	}
	if !st.Replicated() {
		return nil, "this process's own (random)", nil
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	fresh := []byte(base64.StdEncoding.EncodeToString(raw[:]))
	key, err := st.CreateValue(ctx, layout.RequestStateKeyName, fresh)
	if err != nil {
		return nil, "", fmt.Errorf("the requestState key on [cluster] redis_url: %w", err)
	}
	if len(key) < config.MinStateKey {
		return nil, "", fmt.Errorf("the requestState key on [cluster] redis_url is %d bytes, under %d: delete the value %q, or set [cluster] state_key", len(key), config.MinStateKey, layout.RequestStateKeyName)
	}
	return [][]byte{key}, "shared on [cluster] redis_url (set [cluster] state_key to give your own)", nil
}
