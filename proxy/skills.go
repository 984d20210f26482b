package proxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Skills (SEP-2640) from the upstreams that declare the extension:
// skills/list walks them in config order, skills/get and
// resources/directory/read go to the upstream a URI names. Every URI is
// renamed on the way out ([skills.Expose]: skill://<server>/…) and back
// ([skills.Route]); resources/read of a skill file is an ordinary
// resources/read ([Proxy.ReadResource]: redact, divert, charge). What the
// upstream answers is redacted like any result; a listing is not diverted
// (a host reads it, not the model), as tools/list is not.

// skillUpstream is an upstream that declared the skills extension.
type skillUpstream struct {
	u        *upstream.Upstream
	settings wire.SkillsSettings
}

// skillUpstreams are the upstreams that declared the skills extension,
// in config order.
func (p *Proxy) skillUpstreams() []skillUpstream {
	var out []skillUpstream
	for _, u := range p.ups {
		if st, ok := wire.SkillsDeclared(u.Capabilities().Extensions); ok {
			out = append(out, skillUpstream{u, st})
		}
	}
	return out
}

// skillUpstream finds the skills upstream an exposed URI names, and the
// URI it knows it by.
func (p *Proxy) skillUpstream(exposed string) (skillUpstream, string, bool) {
	server, orig, ok := skills.Route(exposed)
	if !ok {
		return skillUpstream{}, "", false
	}
	for _, su := range p.skillUpstreams() {
		if su.u.Name() == server {
			return su, orig, true
		}
	}
	return skillUpstream{}, "", false
}

// skillsCursor is what a skills/list cursor the proxy hands out holds:
// the upstream to ask next and its own cursor.
type skillsCursor struct {
	Server string `json:"s"`
	Cursor string `json:"c,omitempty"`
}

func (c skillsCursor) String() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ListSkills is one page of the upstreams' skills: entries as clients know
// them, and the cursor of the next page ("" after the last). cursor is
// "" for the first page, else one this method returned; a cursor it did
// not give is ErrNotFound. An upstream that fails is left out (a listing
// may be partial, SEP-2640) and logged.
func (p *Proxy) ListSkills(ctx context.Context, r *Request, cursor string) (entries []json.RawMessage, next string, err error) {
	ups := p.skillUpstreams()
	start, upCursor := 0, ""
	if cursor != "" {
		var c skillsCursor
		b, derr := base64.RawURLEncoding.DecodeString(cursor)
		if derr != nil || wire.Unmarshal(b, &c) != nil {
			return nil, "", fmt.Errorf("%w: skills/list cursor %q (not one this server gave)", ErrNotFound, cursor)
		}
		start = -1
		for i, su := range ups {
			if su.u.Name() == c.Server {
				start = i
			}
		}
		if start < 0 {
			return nil, "", fmt.Errorf("%w: skills/list cursor names server %q, which serves no skills now", ErrNotFound, c.Server)
		}
		upCursor = c.Cursor
	}
	for i := start; i < len(ups); i++ {
		u := ups[i].u
		params := map[string]any{}
		if upCursor != "" {
			params["cursor"] = upCursor
		}
		upCursor = ""
		page, upNext, err := p.skillsPage(ctx, r, u, params)
		if err != nil {
			if ctx.Err() != nil {
				return nil, "", ctx.Err()
			}
			p.log.Warn("skills/list: upstream left out of the listing", "server", u.Name(), "error", err)
			continue
		}
		switch {
		case upNext != "":
			next = skillsCursor{Server: u.Name(), Cursor: upNext}.String()
		case i+1 < len(ups):
			next = skillsCursor{Server: ups[i+1].u.Name()}.String()
		}
		if len(page) > 0 || upNext != "" {
			return page, next, nil
		}
		next = "" // an empty last page of this upstream: on to the next
	}
	return nil, "", nil
}

// skillsPage asks u for one page of skills/list.
func (p *Proxy) skillsPage(ctx context.Context, r *Request, u *upstream.Upstream, params map[string]any) ([]json.RawMessage, string, error) {
	raw, _, err := p.forwardMasked(ctx, r, u, wire.MethodSkillsList, "skills/list answer", params)
	if err != nil {
		return nil, "", err
	}
	var res struct {
		Skills     []json.RawMessage `json:"skills"`
		NextCursor string            `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", fmt.Errorf("%w: skills/list from %q: %v", upstream.ErrInvalidResponse, u.Name(), err)
	}
	out := make([]json.RawMessage, 0, len(res.Skills))
	for _, e := range res.Skills {
		x, err := exposeEntry(u.Name(), e)
		if err != nil {
			p.log.Warn("skills/list: entry left out", "server", u.Name(), "error", err)
			continue
		}
		out = append(out, x)
	}
	return out, res.NextCursor, nil
}

// GetSkill forwards skills/get for an exposed SKILL.md URI to the upstream
// it names; a URI no skills upstream serves is ErrNotFound (the SEP's
// -32602).
func (p *Proxy) GetSkill(ctx context.Context, r *Request, uri string) (json.RawMessage, error) {
	su, orig, ok := p.skillUpstream(uri)
	if !ok {
		return nil, fmt.Errorf("%w: no skill is served at %s", ErrNotFound, uri)
	}
	raw, err := p.skillRequest(ctx, r, su.u, wire.MethodSkillsGet, map[string]any{"uri": orig})
	if err != nil {
		return nil, err
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil || res["skill"] == nil {
		return nil, fmt.Errorf("%w: skills/get from %q: no skill object", upstream.ErrInvalidResponse, su.u.Name())
	}
	e, err := exposeEntry(su.u.Name(), res["skill"])
	if err != nil {
		return nil, fmt.Errorf("%w: skills/get from %q: %v", upstream.ErrInvalidResponse, su.u.Name(), err)
	}
	return setMember(raw, "skill", e)
}

// ReadDirectory forwards resources/directory/read for an exposed
// directory URI to the upstream it names. For an upstream that did not
// declare directoryRead the listing is made from the entry of the skill
// the directory is in ([Proxy.directoryOfEntry]): the proxy declares
// directoryRead, and the SEP then wants every directory of the skills it
// serves listed. What is no directory is ErrNotFound (the SEP's -32602).
func (p *Proxy) ReadDirectory(ctx context.Context, r *Request, uri, cursor string) (json.RawMessage, error) {
	su, orig, ok := p.skillUpstream(uri)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a directory resource this server knows", ErrNotFound, uri)
	}
	if !su.settings.DirectoryRead {
		return p.directoryOfEntry(ctx, r, su.u, uri, orig)
	}
	params := map[string]any{"uri": orig}
	if cursor != "" {
		params["cursor"] = cursor
	}
	raw, err := p.skillRequest(ctx, r, su.u, wire.MethodDirectoryRead, params)
	if err != nil {
		return nil, err
	}
	var res struct {
		Resources []json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: %s from %q: %v", upstream.ErrInvalidResponse, wire.MethodDirectoryRead, su.u.Name(), err)
	}
	out := make([]json.RawMessage, 0, len(res.Resources))
	for _, entry := range res.Resources {
		x, err := exposeURIMember(su.u.Name(), entry)
		if err != nil {
			return nil, fmt.Errorf("%w: %s from %q: %v", upstream.ErrInvalidResponse, wire.MethodDirectoryRead, su.u.Name(), err)
		}
		out = append(out, x)
	}
	list, _ := json.Marshal(out)
	return setMember(raw, "resources", list)
}

// maxSkillDepth bounds the skills/get asked to find the skill a
// directory is in (one per level, deepest first).
const maxSkillDepth = 8

// directoryOfEntry lists directory orig of upstream u (exposed as uri)
// from the entry of the skill it is in: the skill whose SKILL.md is in orig
// or the nearest folder above it, found with skills/get. The entry's
// resources name every file of the skill (SEP-2640), so the direct
// children are those under orig: a file (with its size) or the next
// folder down (inode/directory). A "dynamic" skill lists no files: its
// directories cannot be listed.
func (p *Proxy) directoryOfEntry(ctx context.Context, r *Request, u *upstream.Upstream, uri, orig string) (json.RawMessage, error) {
	notDir := fmt.Errorf("%w: %s is not a directory of a skill upstream %q serves", ErrNotFound, uri, u.Name())
	scheme, path, ok := strings.Cut(orig, "://")
	if !ok || path == "" || strings.HasSuffix(path, "/") {
		return nil, notDir
	}
	segs := strings.Split(path, "/")
	var entry struct {
		Skill struct {
			Resources json.RawMessage `json:"resources"`
		} `json:"skill"`
	}
	found := false
	for i := len(segs); i >= 1 && i > len(segs)-maxSkillDepth; i-- {
		skillMD := scheme + "://" + strings.Join(segs[:i], "/") + "/SKILL.md"
		raw, err := p.skillRequest(ctx, r, u, wire.MethodSkillsGet, map[string]any{"uri": skillMD})
		if rerr, ok := errors.AsType[*upstream.RPCError](err); ok && rerr.Code == wire.CodeInvalidParams {
			continue // no skill there: one folder up
		}
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &entry); err != nil {
			return nil, fmt.Errorf("%w: skills/get from %q: %v", upstream.ErrInvalidResponse, u.Name(), err)
		}
		found = true
		break
	}
	var files []struct {
		URI  string `json:"uri"`
		Size *int64 `json:"size"`
	}
	if !found || json.Unmarshal(entry.Skill.Resources, &files) != nil {
		return nil, notDir
	}
	var out []wire.DirectoryEntry
	seen := map[string]bool{}
	for _, f := range files {
		if f.URI == orig {
			return nil, notDir // a file
		}
		rest, under := strings.CutPrefix(f.URI, orig+"/")
		if !under || rest == "" {
			continue
		}
		name, deeper, _ := strings.Cut(rest, "/")
		c := wire.DirectoryEntry{URI: orig + "/" + name, Name: name, Size: f.Size}
		if deeper != "" {
			c = wire.DirectoryEntry{URI: orig + "/" + name, Name: name, MimeType: wire.MimeDirectory}
		}
		if !seen[c.URI] {
			seen[c.URI] = true
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, notDir // a folder holds a file, or it is none
	}
	for i := range out {
		exposed, ok := skills.Expose(u.Name(), out[i].URI)
		if !ok {
			return nil, fmt.Errorf("%w: %s from %q: uri %q cannot be exposed for server %q", upstream.ErrInvalidResponse, wire.MethodDirectoryRead, u.Name(), out[i].URI, u.Name())
		}
		out[i].URI = exposed
	}
	return json.Marshal(map[string]any{"resources": out})
}

// skillRequest forwards one skills request and redacts its answer.
func (p *Proxy) skillRequest(ctx context.Context, r *Request, u *upstream.Upstream, method string, params map[string]any) (json.RawMessage, error) {
	raw, sec, err := p.forwardMasked(ctx, r, u, method, method+" answer", params)
	if err != nil {
		return nil, err
	}
	return withRedactedMeta(raw, sec), nil
}

// exposeEntry is a skill entry of server with its uri and its resources'
// uris as clients know them; every other member as it came.
func exposeEntry(server string, raw json.RawMessage) (json.RawMessage, error) {
	out, err := exposeURIMember(server, raw)
	if err != nil {
		return nil, err
	}
	res, ok := jsonscan.Lookup(out, "resources")
	if !ok || len(res) == 0 || res[0] != '[' {
		return out, nil // absent, or "dynamic"
	}
	var items []json.RawMessage
	if err := json.Unmarshal(res, &items); err != nil {
		return nil, fmt.Errorf("resources: %v", err)
	}
	for i, it := range items {
		if items[i], err = exposeURIMember(server, it); err != nil {
			return nil, fmt.Errorf("resources[%d]: %v", i, err)
		}
	}
	list, _ := json.Marshal(items)
	return setMember(out, "resources", list)
}

// exposeURIMember is the object raw with its string member uri exposed.
func exposeURIMember(server string, raw json.RawMessage) (json.RawMessage, error) {
	v, ok := jsonscan.Lookup(raw, "uri")
	var uri string
	if !ok || json.Unmarshal(v, &uri) != nil {
		return nil, errors.New("no uri string")
	}
	exposed, ok := skills.Expose(server, uri)
	if !ok {
		return nil, fmt.Errorf("uri %q cannot be exposed for server %q", uri, server)
	}
	return setMember(raw, "uri", mustJSON(exposed))
}

// exposedSkillURI is the URI clients know upstream u's skill:// URI (or
// template) by; ok is false for another scheme (the catalogue's usual
// rules apply to it) and hidden is true for one that cannot be exposed.
func exposedSkillURI(server, uri string) (exposed string, ok, hidden bool) {
	if !strings.HasPrefix(uri, wire.SkillScheme) {
		return "", false, false
	}
	exposed, ok = skills.Expose(server, uri)
	return exposed, true, !ok
}
