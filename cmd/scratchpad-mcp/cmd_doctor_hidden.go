package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// A client may not see every tool doctor lists: doctor connects offering
// sampling, elicitation and roots, and some servers (server-everything)
// list tools by what a client declares at initialize; over stdio the
// proxy tells upstreams what its own client declared. mcp_filter, name
// clashes and search mode hide tools too. doctor says which and why; the
// first needs a second instance of each server, which only --bare starts.

// bareClient (doctor --bare) starts a second instance of every server of
// ups that is ready, told the client declares none of sampling,
// elicitation and roots: what a plain stdio client's upstreams list. It
// starts once the first instances have, so a package runner's cache is
// warm. It returns the proxy (the caller closes it) and the instances by
// server name.
func bareClient(ctx context.Context, ups []*upstream.Upstream, d *doctor) (*proxy.Proxy, map[string]*upstream.Upstream) {
	var servers []config.Server
	for _, u := range ups {
		if st, _ := u.State(); st == upstream.StateReady {
			servers = append(servers, *u.Config())
		}
	}
	p := proxy.New(proxy.Options{Servers: servers, Logger: d.log, Version: versionString()})
	p.Start(ctx, map[string]any{})
	waitUpstreams(p.Upstreams(), d.startWait, io.Discard)
	out := map[string]*upstream.Upstream{}
	for _, u := range p.Upstreams() {
		out[u.Name()] = u
	}
	return p, out
}

// reportHidden prints the tools of server u that a client may not be
// shown: left out by mcp_filter or a name clash, listed by the server only
// to clients that declare capabilities (bare is u's instance told none),
// or left to search_tools in search mode.
func (d *doctor) reportHidden(cfg *config.Config, u, bare *upstream.Upstream, exposed map[string]bool) {
	sc := u.Config()
	var filtered, clashed []string
	for _, it := range u.Tools() {
		switch {
		case !sc.Allowed(it.Name):
			filtered = append(filtered, it.Name)
		case !exposed[sc.ExposedName(it.Name)]:
			clashed = append(clashed, it.Name)
		}
	}
	if len(filtered) > 0 {
		fmt.Fprintf(d.out, "  hidden by mcp_filter: %s\n", few(filtered))
	}
	if len(clashed) > 0 {
		fmt.Fprintf(d.out, "  not exposed, the name is taken (by scratchpad-mcp or an earlier server; set a prefix): %s\n", few(clashed))
	}
	if bare != nil {
		if st, _ := bare.State(); st == upstream.StateReady {
			plain := map[string]bool{}
			for _, it := range bare.Tools() {
				plain[it.Name] = true
			}
			var capOnly []string
			for _, it := range u.Tools() {
				if !plain[it.Name] && sc.Allowed(it.Name) && exposed[sc.ExposedName(it.Name)] {
					capOnly = append(capOnly, sc.ExposedName(it.Name))
				}
			}
			if len(capOnly) > 0 {
				fmt.Fprintf(d.out, "  listed only to clients that declare sampling, elicitation or roots: %s (the server lists tools by what a client declares; over stdio scratchpad-mcp passes on what its client declared, over HTTP it declares all three)\n", few(capOnly))
			}
		}
	}
	if cfg.Catalogue.Mode == config.CatalogueSearch && sc.Listing != config.ListingAlways {
		fmt.Fprintf(d.out, "  [catalogue] mode = \"search\": these tools are found with search_tools and run with call_tool, not listed (listing = \"always\" lists them)\n")
	}
}

// few names up to 8 items, sorted, and how many more there are.
func few(names []string) string {
	sort.Strings(names)
	if len(names) <= 8 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:8], ", "), len(names)-8)
}
