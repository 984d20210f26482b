package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The Server Card (SEP-2127, extension io.modelcontextprotocol/server-card;
// the shape is experimental-ext-server-card's schema.json, v1): a public,
// static document naming the server, its version and where and how to
// connect, fetched before any connection. It is served without a bearer
// token (it is public by design), so it holds nothing owner-specific:
// identity, the transport's URL and revisions, whether a bearer token is
// required (never a token), and in _meta the names of scratchpad-mcp's
// own tools, which every agent is offered whoever its owner. Upstream
// tools are left out: they can differ per owner (each owner's upstreams
// run under its own credentials), and the SEP keeps primitives out of the
// card for that reason.

// CardSchema is the $schema every v1 Server Card names.
const CardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// CardMediaType is the Server Card's media type.
const CardMediaType = "application/mcp-server-card+json"

// Server Card paths: the SEP reserves <streamable-http-url>/server-card;
// the well-known one is where issue 55 asked for it (an earlier draft's).
const (
	CardPath          = "/mcp/server-card"
	CardWellKnownPath = "/.well-known/mcp/server-card.json"
)

// CardToolsKey is the _meta key of the own tools' summary.
const CardToolsKey = "io.github.scratchpad-mcp/tools"

// CardOptions describe the server for its card.
type CardOptions struct {
	// Name is the registry name, reverse-DNS with one slash
	// ("io.github.scratchpad-mcp/scratchpad-mcp", as server.json).
	Name, Title, Description, Version string
	// RepositoryURL, when not "", is the source (GitHub).
	RepositoryURL string
	// PublicURL is [http] public_url ("" when unset: the request's Host,
	// which the front door has checked, over http).
	PublicURL string
	// Transport is "http" (streamable HTTP at /mcp) or "sse" (/sse).
	Transport string
	// BearerToken says a bearer token is required ([http] tokens).
	BearerToken bool
	// Tools are the own tools every agent is offered.
	Tools []CardTool
}

// CardTool is one tool of the summary.
type CardTool struct {
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	// Summary is the description's first sentence.
	Summary string `json:"summary,omitempty"`
}

// FirstSentence is s up to its first ". " or newline, at most 160 bytes
// (cut at a word): a tool's summary.
func FirstSentence(s string) string {
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 160 {
		s = s[:160]
		if i := strings.LastIndexByte(s, ' '); i > 0 {
			s = s[:i]
		}
		s += "…"
	}
	return strings.TrimSpace(s)
}

type card struct {
	Schema      string          `json:"$schema"`
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Repository  *cardRepository `json:"repository,omitempty"`
	Remotes     []cardRemote    `json:"remotes"`
	Meta        map[string]any  `json:"_meta,omitempty"`
}

type cardRepository struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

type cardRemote struct {
	Type                      string       `json:"type"`
	URL                       string       `json:"url"`
	Headers                   []cardHeader `json:"headers,omitempty"`
	SupportedProtocolVersions []string     `json:"supportedProtocolVersions"`
}

type cardHeader struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	IsRequired  bool                 `json:"isRequired"`
	IsSecret    bool                 `json:"isSecret"`
	Value       string               `json:"value"`
	Variables   map[string]cardInput `json:"variables"`
}

type cardInput struct {
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// maxCardHosts bounds the cards kept per Host when no public_url is set
// (a listener on all interfaces takes any Host): past it, a card is built
// per request, which costs microseconds.
const maxCardHosts = 16

// ServerCard serves the card: GET and HEAD (OPTIONS for a browser's
// preflight), with the SEP's CORS and caching headers, an ETag and 304 for
// If-None-Match. It reads no body and writes under 4 KB.
func ServerCard(opts CardOptions) http.Handler {
	type card struct {
		body []byte
		etag string
	}
	var mu sync.Mutex
	byHost := map[string]card{}
	build := func(base string) card {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := byHost[base]; ok {
			return c
		}
		b := opts.build(base)
		sum := sha256.Sum256(b)
		c := card{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		if len(byHost) < maxCardHosts {
			byHost[base] = c
		}
		return c
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET")
		h.Set("Access-Control-Allow-Headers", "Content-Type, If-None-Match")
		h.Set("Access-Control-Expose-Headers", "ETag")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		base, ok := opts.base(r)
		if !ok {
			http.Error(w, "bad Host", http.StatusBadRequest)
			return
		}
		c := build(base)
		body, etag := c.body, c.etag
		h.Set("Content-Type", CardMediaType)
		h.Set("Cache-Control", "public, max-age=3600")
		h.Set("ETag", etag)
		h.Set("Vary", "Host")
		for _, v := range r.Header.Values("If-None-Match") {
			for _, t := range strings.Split(v, ",") {
				if t = strings.TrimSpace(t); t == etag || t == "*" {
					w.WriteHeader(http.StatusNotModified)
					return
				}
			}
		}
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}

// base is the server's URL as the card names it: public_url, or
// http://Host (a host and optional port, nothing else).
func (o CardOptions) base(r *http.Request) (string, bool) {
	if o.PublicURL != "" {
		return strings.TrimSuffix(o.PublicURL, "/"), true
	}
	host := r.Host
	if host == "" || strings.ContainsAny(host, "/?#@ \\") {
		return "", false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if u, err := url.Parse("http://" + r.Host); err != nil || u.Hostname() != strings.Trim(host, "[]") {
		return "", false
	}
	return "http://" + r.Host, true
}

func (o CardOptions) build(base string) []byte {
	c := card{Schema: CardSchema, Name: o.Name, Version: o.Version, Title: o.Title, Description: o.Description}
	if o.RepositoryURL != "" {
		c.Repository = &cardRepository{URL: o.RepositoryURL, Source: "github"}
	}
	rm := cardRemote{Type: "streamable-http", URL: base + "/mcp", SupportedProtocolVersions: wire.Served()}
	if o.Transport == "sse" {
		rm = cardRemote{Type: "sse", URL: base + "/sse", SupportedProtocolVersions: wire.Revisions2025()}
	}
	if o.BearerToken {
		rm.Headers = []cardHeader{{
			Name:        "Authorization",
			Description: "A bearer token the operator issued (scratchpad-mcp token add OWNER); it names the owner.",
			IsRequired:  true, IsSecret: true, Value: "Bearer {token}",
			Variables: map[string]cardInput{"token": {Description: "The bearer token.", IsRequired: true, IsSecret: true}},
		}}
	}
	c.Remotes = []cardRemote{rm}
	if len(o.Tools) > 0 {
		c.Meta = map[string]any{CardToolsKey: map[string]any{
			"note":  "scratchpad-mcp's own tools, offered to every agent; the upstream servers' tools are listed at runtime (tools/list), per owner",
			"tools": o.Tools,
		}}
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	return append(b, '\n')
}
