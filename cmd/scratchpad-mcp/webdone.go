package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// loginDone is what the replica an owner's login through the server came
// back to publishes: whose, which server's, and the elicitation id the owner's clients
// were given (the login URL's hash; neither is a secret).
type loginDone struct {
	Owner  string `json:"owner"`
	Server string `json:"server"`
	ID     string `json:"elicitation_id"`
}

// loginDoneTimeout bounds the publish.
const loginDoneTimeout = 2 * time.Second

// relayLoginsDone makes a completed login reach the owner's sessions on
// every replica: the owner's session may live on another replica than
// the one the redirect reached, and so may an upstream waiting for the
// login. It subscribes (for st's life) to
// [layout.OAuthWebLoginDoneChannel] and calls notify for each message,
// and returns what a completion calls: a publish there, or notify itself
// when nobody listens (the subscription failed, Redis away). Duplicates
// are possible (a session with copies on two replicas hears it twice);
// the MCP client ignores a completion it already had.
func relayLoginsDone(st state.Store, log *slog.Logger, notify func(owner, server, id string)) func(owner, server, id string) {
	channel := layout.OAuthWebLoginDoneChannel()
	// For the store's life: a subscription ends with its context, and
	// Subscribe bounds its own wait for Redis.
	sub, err := st.Subscribe(context.Background(), channel)
	if err != nil {
		log.Warn("owners' OAuth logins completed on another replica will not reach this replica's sessions", "error", err)
		return notify
	}
	go func() {
		for msg := range sub.C() {
			var d loginDone
			if json.Unmarshal(msg, &d) == nil && d.Owner != "" {
				notify(d.Owner, d.Server, d.ID)
			}
		}
	}()
	return func(owner, server, id string) {
		msg, _ := json.Marshal(loginDone{Owner: owner, Server: server, ID: id})
		ctx, cancel := context.WithTimeout(context.Background(), loginDoneTimeout)
		defer cancel()
		if n, err := st.Publish(ctx, channel, msg); err != nil || n == 0 {
			if err != nil {
				log.Warn("telling the other replicas an OAuth login completed failed; this replica's sessions are told", "error", err)
			}
			notify(owner, server, id)
		}
	}
}
