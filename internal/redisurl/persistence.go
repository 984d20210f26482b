package redisurl

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Persistence is what a Redis server keeps over its own restart, as its
// configuration says: an append-only file, RDB snapshots, or nothing (a
// restart then comes back empty, and whatever the project kept there —
// budgets, pads, sessions — with it).
type Persistence struct {
	// AOF is appendonly yes.
	AOF bool
	// Save is the RDB snapshot schedule ("" for none).
	Save string
	// Known is false when the server would not say (CONFIG GET refused:
	// a managed Redis, an ACL); Reason then says why.
	Known  bool
	Reason string
}

// Durable reports whether the server keeps its data over a restart (or
// would not say: a managed service usually does).
func (p Persistence) Durable() bool { return !p.Known || p.AOF || p.Save != "" }

// String is the persistence as the start line and doctor say it.
func (p Persistence) String() string {
	switch {
	case !p.Known:
		return "persistence unknown (" + p.Reason + ")"
	case p.AOF && p.Save != "":
		return fmt.Sprintf("persistent (appendonly yes, save %q)", p.Save)
	case p.AOF:
		return "persistent (appendonly yes)"
	case p.Save != "":
		return fmt.Sprintf("snapshots only (appendonly no, save %q): a restart loses what changed since the last snapshot", p.Save)
	}
	return `NOT persistent (appendonly no, save ""): a restart loses everything kept there`
}

// CheckPersistence asks the server c talks to for its persistence
// (CONFIG GET appendonly, save). An error is a server that cannot be
// reached; a server that refuses CONFIG is Persistence{Known: false}.
func CheckPersistence(ctx context.Context, c *redis.Client) (Persistence, error) {
	aof, err := c.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		if isRefusal(err) {
			return Persistence{Reason: "CONFIG GET refused: " + err.Error()}, nil
		}
		return Persistence{}, err
	}
	save, err := c.ConfigGet(ctx, "save").Result()
	if err != nil {
		if isRefusal(err) {
			return Persistence{Reason: "CONFIG GET refused: " + err.Error()}, nil
		}
		return Persistence{}, err
	}
	return Persistence{Known: true, AOF: strings.EqualFold(aof["appendonly"], "yes"), Save: strings.TrimSpace(save["save"])}, nil
}

// isRefusal: the server answered, with an error (unknown command, no
// permission), rather than not answering.
func isRefusal(err error) bool {
	_, ok := err.(redis.Error)
	return ok
}
