package layout

import (
	"net/url"
	"strings"
)

// RedisBase starts every key of the thing id names under prefix:
// "{prefix}:{{id}}". The braces make id the key's hash tag, so all of a
// pad's keys live on one cluster slot and its scripts may touch them all.
func RedisBase(prefix, id string) string { return prefix + ":{" + id + "}" }

// PadID names a pad on Redis with the identity the file tree gives: with
// run != "" (the pad's scope is the run) the run's shared pad "run:{run}",
// otherwise the agent's own "agent:{agent}"; both after [OwnerSegment], so
// every key of an owner's pads carries its owner and two owners' run-1
// never meet.
func PadID(owner, run, agent string) string {
	s := "agent:" + agent
	if run != "" {
		s = "run:" + run
	}
	return OwnerSegment(owner) + s
}

// ArtifactsKey is the Redis key (a hash: name → content) of run's
// artifacts: "{prefix}:{artifacts:{owner segment}run:{run}}". Its hash tag
// differs from the run pad's, so deleting the pad leaves them.
func ArtifactsKey(prefix, owner, run string) string {
	return RedisBase(prefix, "artifacts:"+OwnerSegment(owner)+"run:"+run)
}

// OwnerSegment starts every Redis id of an owner's things: "owner:{owner}/",
// "" without one. Owners are plain names ([A-Za-z0-9._-]), escaped all the
// same so that no owner can break a key's hash tag.
func OwnerSegment(owner string) string {
	if owner == "" {
		return ""
	}
	return "owner:" + url.PathEscape(owner) + "/"
}

// DefaultClusterPrefix starts every key of package state's Redis store
// when [cluster] prefix is not set.
const DefaultClusterPrefix = "scratchpad-cluster"

// DefaultRedisPrefix starts every key when [pad] redis_prefix is not set.
const DefaultRedisPrefix = "scratchpad"

// CheckRedisPrefix returns why prefix cannot start keys, or "": it must be
// 1-64 characters of A-Z a-z 0-9 . _ : - (no braces, which delimit hash
// tags, and nothing a key pattern would read as a wildcard).
func CheckRedisPrefix(prefix string) string {
	switch {
	case prefix == "":
		return "must not be empty"
	case len(prefix) > 64:
		return "longer than 64 characters"
	}
	for _, c := range prefix {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:-", c)
		if !ok {
			return "use only A-Z a-z 0-9 . _ : -"
		}
	}
	return ""
}

// ClusterKey names a key of package state's Redis store:
// "{prefix}:{part}:{part}…". Callers pass an owner's parts through
// [OwnerSegment] first, so two owners' keys never meet; a part holding
// braces would change the hash tag, and parts are escaped so none can.
func ClusterKey(prefix string, parts ...string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(braces.Replace(p))
	}
	return b.String()
}

var braces = strings.NewReplacer("{", "%7B", "}", "%7D")
