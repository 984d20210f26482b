package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// DefaultMaxBytes is [Env].MaxBytes's default: 64 MiB taken by one call's
// references, all together.
const DefaultMaxBytes = 64 << 20

// Env is what resolving needs to know about the calling agent. The zero
// value of each field but Explore means its default.
type Env struct {
	// Explore is the agent's exploration environment: its read root (an
	// os.Root: "..", absolute paths and links leaving it are refused), the
	// folder its stored outputs are in, its token counter. Required.
	Explore *explore.Env
	// MaxBytes bounds the bytes one call's references take, all
	// together ([explore] max_reference_bytes); 0 means
	// [DefaultMaxBytes].
	MaxBytes int64
	// Redactor, when set, masks the credentials in what a reference
	// puts in a call (a redactor in mask mode), unless [Call].KeepSecrets.
	Redactor *redact.Redactor
	// OnResolved, when set, is told what a call's references put in it,
	// once they all resolved (the agent's usage counts their tokens, as
	// tokens_by_reference). May be nil.
	OnResolved func(Resolved)
}

// Call is one tool call's arguments to resolve.
type Call struct {
	// Args are the arguments as the client sent them.
	Args json.RawMessage
	// Schema is the tool's input schema; nil: no parameter is known to
	// be a string, and the result is not checked.
	Schema *Schema
	// KeepSecrets sends what is referenced as it is stored, credentials
	// included ([mcp.servers.NAME] secrets_by_reference = true).
	KeepSecrets bool
}

// Resolved is a call's arguments with their references replaced.
type Resolved struct {
	// Args are what to send: the arguments themselves when they hold
	// neither a reference nor options.
	Args    json.RawMessage
	Options Options
	// Refs are the references, in the order they were written.
	Refs []Resolution
	// Bytes and Tokens are what the references put in the call: bytes
	// as taken from the files, tokens as the agent's model counts them
	// (what typing them out would have cost).
	Bytes  int64
	Tokens int
	// Masked counts by kind the credentials masked in what was put in.
	Masked map[string]int
}

// Resolution is one reference and what it became.
type Resolution struct {
	At     string // JSON Pointer of its place in the arguments
	Ref    Ref
	As     string // AsText or AsJSON, as applied
	Bytes  int64
	Tokens int
}

// Files are the stored outputs the references name, once each, in order.
func (r Resolved) Files() []string {
	var out []string
	for _, x := range r.Refs {
		if !slices.Contains(out, x.Ref.File) {
			out = append(out, x.Ref.File)
		}
	}
	return out
}

// Resolve replaces every reference in c.Args by what it names, takes the
// top-level options out, and checks the result against c.Schema. Any
// problem is an [*Error] (matching one of the sentinel errors) and
// nothing is to be sent; ctx's end is its error.
func Resolve(ctx context.Context, env *Env, c Call) (Resolved, error) {
	out := Resolved{Args: c.Args}
	if !maybe(c.Args) {
		return out, nil
	}
	if !jsonscan.Valid(c.Args) {
		return out, nil // the upstream says what is wrong, as without references
	}
	f, err := find(c.Args)
	if err != nil {
		return out, err
	}
	out.Options = f.opts
	if len(f.sites) == 0 && f.drop == [2]int{} {
		return out, nil
	}
	if len(f.sites) > 0 && (env == nil || env.Explore == nil) {
		return out, &Error{Code: "no_read_root", Message: "this session has no stored outputs to refer to. Nothing was sent.", err: ErrUnresolved}
	}
	max := int64(DefaultMaxBytes)
	if env != nil && env.MaxBytes > 0 {
		max = env.MaxBytes
	}
	type edit struct {
		start, end int
		with       []byte
	}
	var edits []edit
	if f.drop != [2]int{} {
		edits = append(edits, edit{f.drop[0], f.drop[1], nil})
	}
	for _, s := range f.sites {
		val, res, err := env.take(ctx, c, s, max-out.Bytes)
		if err != nil {
			return Resolved{Args: c.Args}, err
		}
		out.Bytes += res.Bytes
		out.Tokens += res.Tokens
		out.Refs = append(out.Refs, res)
		if env.Redactor != nil && !c.KeepSecrets {
			masked, rep, err := env.Redactor.JSON(nil, val)
			if err == nil && rep.Total > 0 {
				val = masked
				if out.Masked == nil {
					out.Masked = map[string]int{}
				}
				for k, n := range rep.Counts {
					out.Masked[k] += n
				}
			}
		}
		edits = append(edits, edit{s.start, s.end, val})
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	size := len(c.Args)
	for _, e := range edits {
		size += len(e.with) - (e.end - e.start)
	}
	b := make([]byte, 0, size)
	last := 0
	for _, e := range edits {
		b = append(b, c.Args[last:e.start]...)
		b = append(b, e.with...)
		last = e.end
	}
	out.Args = append(b, c.Args[last:]...)
	if err := ctx.Err(); err != nil {
		return Resolved{Args: c.Args}, err
	}
	if c.Schema != nil && c.Schema.validator != nil {
		if ps := c.Schema.validator.Validate(out.Args); len(ps) > 0 {
			return Resolved{Args: c.Args}, doesNotFit(ps, f.sites, out.Refs)
		}
	}
	if len(out.Refs) > 0 && env.OnResolved != nil {
		env.OnResolved(out)
	}
	return out, nil
}

// Maybe reports whether args may hold a reference or the call's options,
// without walking them: false means [Resolve] has nothing to do.
func Maybe(args []byte) bool { return maybe(args) }

// take is the JSON that replaces the reference at s, at most max bytes
// taken from its file.
func (env *Env) take(ctx context.Context, c Call, s site, max int64) ([]byte, Resolution, error) {
	r := s.ref
	res := Resolution{At: s.at.pointer(), Ref: r, As: r.As}
	if max <= 0 {
		max = 1 // nothing is left: any byte is over
	}
	sel := explore.Selector{Path: r.Path, First: r.first, Last: r.last, Max: max}
	if res.As == "" {
		// Text where the parameter takes only a string, and for lines;
		// else the JSON value (a text file's whole text below).
		res.As = AsJSON
		if r.first > 0 || c.Schema.stringOnly(s.at) {
			res.As = AsText
		}
	}
	var t explore.Taken
	var err error
	switch {
	case res.As == AsJSON && r.Path == "" && r.first == 0:
		// The whole file as one value; a text file, unless asked for as
		// JSON, goes as its text.
		t, err = explore.Take(ctx, env.Explore, r.File, explore.Selector{JSON: true, Max: max})
		if rf, ok := errors.AsType[*explore.Refusal](err); ok && rf.Code == "not_json" && r.As == "" {
			res.As = AsText
			t, err = explore.Take(ctx, env.Explore, r.File, sel)
		}
	default:
		t, err = explore.Take(ctx, env.Explore, r.File, sel)
	}
	if err != nil {
		return nil, res, env.refused(s, err)
	}
	res.Bytes = int64(len(t.Data))
	var text []byte // what the model would have typed
	var val []byte
	switch {
	case res.As == AsJSON && t.JSON:
		val, text = t.Data, t.Data
	case res.As == AsJSON:
		// Lines or a text file asked for as JSON: their text must be one
		// JSON value.
		var b bytes.Buffer
		if err := json.Compact(&b, t.Data); err != nil {
			return nil, res, &Error{Code: "not_json", At: res.At, Reference: bytes.Clone(s.raw), err: ErrUnresolved,
				Message: fmt.Sprintf(`the reference at %s asks for JSON ("as": "json"), but what it selects of %q is not one JSON value (%v). Use "as": "text", or a path. Nothing was sent.`, res.At, r.File, err)}
		}
		val, text = b.Bytes(), b.Bytes()
	case t.JSON && len(t.Data) > 0 && t.Data[0] == '"':
		val, text = t.Data, []byte(jsonscan.Unquote(t.Data)) // a string value is its text
	case t.JSON:
		var b bytes.Buffer
		if json.Indent(&b, t.Data, "", "  ") != nil {
			b.Reset()
			b.Write(t.Data)
		}
		text = b.Bytes()
		val = quote(text)
	default:
		val, text = quote(t.Data), t.Data
	}
	if env.Explore.Count != nil {
		res.Tokens = env.Explore.Count(string(text))
	}
	return val, res, nil
}

// quote is text as a JSON string, its bytes as they are (HTML
// characters not escaped; invalid UTF-8 becomes U+FFFD, as encoding/json
// writes it).
func quote(text []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(text) + len(text)/16 + 2)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(string(text)) // a string always encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}

// storedShown is how many stored outputs an answer names.
const storedShown = 10

// refused is the answer for a reference explore.Take refused.
func (env *Env) refused(s site, err error) error {
	at := s.at.pointer()
	rf, ok := errors.AsType[*explore.Refusal](err)
	if !ok {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return &Error{Code: "io_error", At: at, Message: fmt.Sprintf("the reference at %s could not be read: %v. Nothing was sent.", at, err), err: ErrUnresolved}
	}
	e := &Error{Code: rf.Code, At: at, Detail: rf.Answer, err: ErrUnresolved}
	e.Reference = json.RawMessage(bytes.Clone(s.raw))
	msg := rf.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:] // the code is said once, in "error"
	}
	e.Message = fmt.Sprintf("the reference at %s: %s Nothing was sent.", at, msg)
	switch {
	case errors.Is(err, explore.ErrNotFound), errors.Is(err, explore.ErrOutsideRoot), errors.Is(err, explore.ErrInvalidName), errors.Is(err, explore.ErrNotRegular):
		e.err = ErrNotFound
		if errors.Is(err, explore.ErrOutsideRoot) {
			e.err = ErrOutside
			e.Message = fmt.Sprintf("the reference at %s names %q, which is not one of your stored outputs: a reference reads only under your read root (no other owner's or run's files, no absolute paths, no '..' out of it). Nothing was sent.", at, s.ref.File)
		}
		e.Stored, e.StoredTotal = explore.Stored(env.Explore, s.ref.File, storedShown)
		if e.Stored == nil {
			e.Stored = []string{}
		}
	case rf.Code == "key_path_not_found", errors.Is(err, explore.ErrNothingSelected):
		e.err = ErrNothingSelected
		e.Corrected = corrected(s, rf.Answer)
	case errors.Is(err, explore.ErrBadPath):
		e.Corrected = corrected(s, rf.Answer)
	case errors.Is(err, explore.ErrTooLarge):
		e.err = ErrTooLarge
		e.Message = fmt.Sprintf("the reference at %s: %s The bound is [explore] max_reference_bytes, for all the references of one call together. Nothing was sent.", at, strings.TrimSuffix(msg, "."))
	}
	return e
}

// doesNotFit is the answer for resolved arguments that the input schema
// refuses: its problems, and for one at a reference's place, what to
// change.
func doesNotFit(ps []tool.Problem, sites []site, refs []Resolution) error {
	e := &Error{Code: "reference_does_not_fit", err: ErrDoesNotFit}
	var hints []string
	for _, p := range ps {
		e.Problems = append(e.Problems, p.Message)
		for i, s := range sites {
			if !under(p.Path, s.at) {
				continue
			}
			if e.At == "" {
				e.At = refs[i].At
				e.Reference = json.RawMessage(bytes.Clone(s.raw))
			}
			switch {
			case p.Keyword == "type" && refs[i].As == AsJSON:
				hints = append(hints, fmt.Sprintf(`the reference at %s put a JSON value there: add "as": "text" to pass it as text`, refs[i].At))
			case p.Keyword == "type" && refs[i].As == AsText:
				hints = append(hints, fmt.Sprintf(`the reference at %s put text there: add "as": "json" (or a path) to pass a JSON value`, refs[i].At))
			}
		}
	}
	e.Message = "with its references replaced, the call does not fit the tool's input schema: " + strings.Join(e.Problems, "; ")
	if len(hints) > 0 {
		e.Message += "; " + strings.Join(hints, "; ")
	}
	e.Message += ". Nothing was sent."
	return e
}

// corrected is the reference at s with the path the exploration tools'
// answer proposes instead (its corrected_path, or the get_in of the
// closest existing key), nil when it proposes none.
func corrected(s site, detail json.RawMessage) json.RawMessage {
	var a struct {
		Corrected   string `json:"corrected_path"`
		Suggestions []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
			Why       string         `json:"why"`
		} `json:"suggestions"`
	}
	if json.Unmarshal(detail, &a) != nil {
		return nil
	}
	path := a.Corrected
	for _, sg := range a.Suggestions {
		if p, ok := sg.Arguments["path"].(string); ok && path == "" && sg.Tool == explore.ToolGetIn && sg.Why == "closest existing key" {
			path = p
		}
	}
	if path == "" || s.ref.Path == "" {
		return nil
	}
	r := s.ref
	r.Path = path
	b, err := tool.MarshalNoEscape(map[string]Ref{Key: r}) // paths hold < and >
	if err != nil {
		return nil
	}
	return b
}

// under reports whether the problem at path is at or inside location l.
func under(path []string, l location) bool {
	if len(path) < len(l) {
		return false
	}
	for i, s := range l {
		want := s.key
		if s.index >= 0 {
			want = fmt.Sprint(s.index)
		}
		if path[i] != want {
			return false
		}
	}
	return true
}
