package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/appview"
)

// TestViewOfferedToAppsHostsOnly: the view's tools are listed, and
// callable, only for a client that declared the MCP Apps extension, in
// both eras; any other client's listing is what it was before the view
// (TestToolsListTokens bounds it), and a call of view_page from it is an
// unknown tool.
func TestViewOfferedToAppsHostsOnly(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	apps := &mcp.ClientCapabilities{}
	apps.AddExtension(appview.Extension, map[string]any{"mimeTypes": []string{appview.MIMEType}})
	other := &mcp.ClientCapabilities{}
	other.AddExtension("io.example/other", nil)
	// null is no declaration (wire.DeclaresExtension: an object is).
	null := &mcp.ClientCapabilities{Extensions: map[string]any{appview.Extension: nil}}
	for _, tc := range []struct {
		name   string
		caps   *mcp.ClientCapabilities
		modern string // the 2026-07-28 request's clientCapabilities
		listed bool
	}{
		{"an MCP Apps host", apps, `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, true},
		{"another extension", other, `{"extensions":{"io.example/other":{}}}`, false},
		{"no extension", nil, `{}`, false},
		{"the extension as null", null, `{"extensions":{"io.modelcontextprotocol/ui":null}}`, false},
	} {
		t.Run(tc.name+"/2025", func(t *testing.T) {
			var opts *mcp.ClientOptions
			if tc.caps != nil {
				opts = &mcp.ClientOptions{Capabilities: tc.caps}
			}
			c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: http.DefaultClient}, opts, protocolVersion)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := c.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]*mcp.Tool{}
			for _, tl := range res.Tools {
				got[tl.Name] = tl
			}
			if (got[appview.ToolView] != nil) != tc.listed || (got[appview.ToolPage] != nil) != tc.listed || got["head"] == nil {
				t.Fatalf("view listed %v, view_page %v, head %v; want the view's %v", got[appview.ToolView] != nil, got[appview.ToolPage] != nil, got["head"] != nil, tc.listed)
			}
			if tc.listed {
				if ui, _ := got[appview.ToolView].Meta["ui"].(map[string]any); ui["resourceUri"] != appview.URI {
					t.Errorf("view's _meta: %v", got[appview.ToolView].Meta)
				}
				if ui, _ := got[appview.ToolPage].Meta["ui"].(map[string]any); len(ui["visibility"].([]any)) != 1 || ui["visibility"].([]any)[0] != "app" {
					t.Errorf("view_page's _meta: %v", got[appview.ToolPage].Meta)
				}
			}
			rl, err := c.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			page := false
			for _, r := range rl.Resources {
				page = page || r.URI == appview.URI && r.MIMEType == appview.MIMEType
			}
			rr, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: appview.URI})
			read := err == nil && len(rr.Contents) == 1 && rr.Contents[0].MIMEType == appview.MIMEType && rr.Contents[0].Text == appview.Page()
			if page != tc.listed || read != tc.listed {
				t.Errorf("the page listed %v, read %v (%v); want %v", page, read, err, tc.listed)
			}
			r, err := c.CallTool(ctx, &mcp.CallToolParams{Name: appview.ToolPage, Arguments: map[string]any{"file": "x.json", "mode": "lines"}})
			switch {
			case tc.listed && (err != nil || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "file_not_found")):
				t.Errorf("view_page from an Apps host: %v %v", err, r)
			case !tc.listed && (err == nil || !strings.Contains(err.Error(), "unknown tool")):
				t.Errorf("view_page from a client that cannot show it: %v %v, want unknown tool", err, r)
			}
		})
		t.Run(tc.name+"/2026-07-28", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			status, body, err := modernPost(ctx, base, "", "", 1, "tools/list", "", "", tc.modern)
			if err != nil || status != 200 {
				t.Fatalf("tools/list: %d %v %s", status, err, body)
			}
			if strings.Contains(body, `"name":"view"`) != tc.listed || strings.Contains(body, `"name":"view_page"`) != tc.listed || !strings.Contains(body, `"name":"head"`) {
				t.Fatalf("listing %s; want the view's tools %v", short(body), tc.listed)
			}
			_, body, err = modernPost(ctx, base, "", "", 3, "resources/list", "", "", tc.modern)
			if err != nil || strings.Contains(body, appview.URI) != tc.listed {
				t.Fatalf("resources/list: %v %s; want the page %v", err, short(body), tc.listed)
			}
			_, body, err = modernPost(ctx, base, "", "", 4, "resources/read", appview.URI, `"uri":"`+appview.URI+`"`, tc.modern)
			if err != nil || strings.Contains(body, "scratchpad view") != tc.listed {
				t.Fatalf("resources/read: %v %s; want the page %v", err, short(body), tc.listed)
			}
			_, body, err = modernPost(ctx, base, "", "", 2, "tools/call", appview.ToolPage, `"name":"view_page","arguments":{"file":"x.json","mode":"lines"}`, tc.modern)
			if err != nil || strings.Contains(body, "file_not_found") != tc.listed || strings.Contains(body, "unknown tool") == tc.listed {
				t.Fatalf("view_page: %v %s; want it run %v", err, short(body), tc.listed)
			}
		})
	}
}

// TestViewListingTokens measures what the view adds to an MCP Apps
// host's listing: the model sees view's entry only (the host filters
// view_page out, as its visibility asks); other clients' listing does
// not change (TestToolsListTokens bounds it).
func TestViewListingTokens(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(appview.Extension, map[string]any{"mimeTypes": []string{appview.MIMEType}})
	c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: http.DefaultClient}, &mcp.ClientOptions{Capabilities: caps}, protocolVersion)
	defer c.Close()
	res, err := c.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	vo, vc := toolTokens(t, res.Tools, appview.ToolView)
	po, pc := toolTokens(t, res.Tools, appview.ToolPage)
	t.Logf("view: %d o200k, %d claude-sonnet-4 (seen by the model); view_page: %d / %d (the page's only)", vo, vc, po, pc)
	if vo > 130 || vc > 140 || po > 220 || pc > 230 {
		t.Fatalf("view %d / %d, view_page %d / %d tokens; the bound is 130 / 140 and 220 / 230", vo, vc, po, pc)
	}
}
