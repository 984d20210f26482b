package agents

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Roles an agent may have.
const (
	RoleCoordinator = "coordinator"
	RoleWorker      = "worker"
)

// Header names an orchestrator sets on HTTP requests. The same names are
// accepted as query parameters on the endpoint URL.
const (
	HeaderAgent         = "X-Scratchpad-Agent"
	HeaderRole          = "X-Scratchpad-Role"
	HeaderRun           = "X-Scratchpad-Run"
	HeaderIteration     = "X-Scratchpad-Iteration"
	HeaderContextTokens = "X-Scratchpad-Context-Tokens"
)

// ErrInvalidIdentity is returned for an agent name, role, run id or
// iteration that cannot be used.
var ErrInvalidIdentity = errors.New("invalid agent identity")

// Identity is who is calling, as the orchestrator or the command line
// says; never the model.
type Identity struct {
	Agent     string // default "main"
	Role      string // RoleCoordinator or RoleWorker (default)
	Run       string // "" for a single agent
	Iteration int    // iteration number within the run
	Owner     string // the bearer token's owner, if any
}

// Key names the agent id describes, owner included: the same string for
// every request of that agent (a 2026-07-28 client sends no session, so
// its budget and pad are found again by this). Call it on a normalized
// identity; names cannot hold the separator.
func (id Identity) Key() string {
	return id.Owner + "|" + id.Agent + "|" + id.Role + "|" + id.Run + "|" + strconv.Itoa(id.Iteration)
}

// Normalize fills defaults and validates every field.
func (id Identity) Normalize() (Identity, error) {
	if id.Agent == "" {
		id.Agent = layout.DefaultAgent
	}
	if id.Role == "" {
		id.Role = RoleWorker
	}
	id.Role = strings.ToLower(id.Role)
	if id.Role != RoleWorker && id.Role != RoleCoordinator {
		return id, fmt.Errorf("%w: role %q (want %q or %q)", ErrInvalidIdentity, id.Role, RoleCoordinator, RoleWorker)
	}
	if err := validName("agent", id.Agent); err != nil {
		return id, err
	}
	if id.Run != "" {
		if err := validName("run", id.Run); err != nil {
			return id, err
		}
		if layout.Reserved(id.Run) {
			return id, fmt.Errorf("%w: run %q is a reserved name of memory_dir's layout", ErrInvalidIdentity, id.Run)
		}
	}
	if id.Owner != "" {
		if err := validName("owner", id.Owner); err != nil {
			return id, err
		}
	}
	if id.Iteration < 0 {
		return id, fmt.Errorf("%w: iteration %d is negative", ErrInvalidIdentity, id.Iteration)
	}
	return id, nil
}

func validName(what, s string) error {
	if len(s) == 0 || len(s) > 64 || s == "." || s == ".." {
		return fmt.Errorf("%w: %s %q must be 1-64 characters of [A-Za-z0-9._-]", ErrInvalidIdentity, what, s)
	}
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("%w: %s %q must be 1-64 characters of [A-Za-z0-9._-]", ErrInvalidIdentity, what, s)
		}
	}
	return nil
}

// ErrInvalidOwner is returned by [CheckOwner] for a name no owner may
// have.
var ErrInvalidOwner = errors.New("invalid owner name")

// CheckOwner checks a bearer token owner's name given on its own (token
// add, usage --owner): owners become path elements, so 1-64 characters of
// [A-Za-z0-9._-].
func CheckOwner(owner string) error {
	if err := validName("owner", owner); err != nil {
		return fmt.Errorf("%w %q: use 1-64 characters of [A-Za-z0-9._-] (letters, digits, '.', '_', '-')", ErrInvalidOwner, owner)
	}
	return nil
}

type requestIdentityKey struct{}

// WithRequestIdentity returns ctx, an HTTP request's context, carrying the
// identity id its headers gave ([FromRequest]): the HTTP front door (frontdoor.FrontDoor, through its Identify hook) parses it
// once, and [Registry.Session] takes it from there for the session the
// request creates.
func WithRequestIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, requestIdentityKey{}, id)
}

func requestIdentity(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(requestIdentityKey{}).(Identity)
	return id, ok
}

// FromRequest reads the identity of an HTTP request's headers, falling
// back to query parameters of the same names, for the bearer token's
// owner ("" without tokens), and returns it normalised. It also checks
// the request's [HeaderContextTokens], so that a malformed figure is
// refused with the request.
func FromRequest(r *http.Request, owner string) (Identity, error) {
	get := func(name string) string {
		if v := r.Header.Get(name); v != "" {
			return v
		}
		return r.URL.Query().Get(name)
	}
	id := Identity{Agent: get(HeaderAgent), Role: get(HeaderRole), Run: get(HeaderRun), Owner: owner}
	if s := get(HeaderIteration); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return id, fmt.Errorf("%w: %s %q is not a number", ErrInvalidIdentity, HeaderIteration, s)
		}
		id.Iteration = n
	}
	if _, err := ContextTokens(get(HeaderContextTokens)); err != nil {
		return id, err
	}
	return id.Normalize()
}

// ContextTokens parses an [HeaderContextTokens] value: the client's report
// of the model's real context use, per request. "" is 0.
func ContextTokens(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a token count", ErrInvalidIdentity, HeaderContextTokens, s)
	}
	return n, nil
}

// PadRun is the run whose pad the agent id uses under [pad] scope: its run
// with scope "run", "" (its own pad) otherwise. It is the run argument of
// [layout.Tree.Pad] and [layout.PadID].
func (id Identity) PadRun(scope string) string {
	if scope == config.ScopeRun {
		return id.Run
	}
	return ""
}
