package skills

import (
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// OwnNamespace is the first skill-path segment of the server's own skills.
const OwnNamespace = "scratchpad-mcp"

// Separator joins a server's name to a skill URI of another scheme, and
// (as proxy.CollisionSeparator) to any resource URI or template that
// collides in the catalogue: "docs" + "+" + "file:///a.txt". Defined here,
// where proxy (which imports this package) takes it from, so the two
// cannot drift apart.
const Separator = "+"

// Expose is the URI a client knows upstream server's skill URI (or skill
// URI template) by; ok is false when it cannot be exposed (the server's
// name is the own namespace, or the URI is empty).
func Expose(server, uri string) (exposed string, ok bool) {
	if server == "" || server == OwnNamespace || uri == "" {
		return "", false
	}
	if rest, ok := strings.CutPrefix(uri, wire.SkillScheme); ok {
		if rest == "" || strings.HasPrefix(rest, "/") {
			return "", false
		}
		return wire.SkillScheme + server + "/" + rest, true
	}
	return server + Separator + uri, true
}

// Route undoes [Expose]: the server an exposed URI belongs to and the URI
// it knows it by. ok is false for a URI Expose never gives (no server
// segment, the own namespace, a bare skill://<server>).
func Route(exposed string) (server, uri string, ok bool) {
	if rest, isSkill := strings.CutPrefix(exposed, wire.SkillScheme); isSkill {
		server, path, found := strings.Cut(rest, "/")
		if !found || server == "" || path == "" || server == OwnNamespace {
			return "", "", false
		}
		return server, wire.SkillScheme + path, true
	}
	server, uri, found := strings.Cut(exposed, Separator)
	if !found || server == "" || !strings.Contains(uri, "://") || strings.Contains(server, "://") {
		return "", "", false
	}
	return server, uri, true
}

// IsOwn reports whether uri is in the server's own skill namespace
// (skill://scratchpad-mcp or below).
func IsOwn(uri string) bool {
	rest, ok := strings.CutPrefix(uri, wire.SkillScheme+OwnNamespace)
	return ok && (rest == "" || strings.HasPrefix(rest, "/"))
}
