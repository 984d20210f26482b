package proxy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
)

func apps() ClientCapabilities {
	return ClientCapabilities{Extensions: map[string]json.RawMessage{AppsExtension: json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`)}}
}

// TestAppToolOf reads what a listing says of MCP Apps, as
// @modelcontextprotocol/server-system-monitor 2.0.3 and the spec write it.
func TestAppToolOf(t *testing.T) {
	for _, tt := range []struct {
		name, def string
		want      appTool
	}{
		{"page", `{"name":"get-system-info","_meta":{"ui":{"resourceUri":"ui://system-monitor/mcp-app.html"},"ui/resourceUri":"ui://system-monitor/mcp-app.html"}}`, appTool{page: true}},
		{"flat key only (deprecated)", `{"name":"t","_meta":{"ui/resourceUri":"ui://x/y.html"}}`, appTool{page: true}},
		{"app-only", `{"name":"poll-system-stats","_meta":{"ui":{"visibility":["app"]}}}`, appTool{appOnly: true}},
		{"page, app-only", `{"name":"t","_meta":{"ui":{"resourceUri":"ui://x","visibility":["app"]}}}`, appTool{page: true, appOnly: true}},
		{"visible to both", `{"name":"t","_meta":{"ui":{"resourceUri":"ui://x","visibility":["model","app"]}}}`, appTool{page: true}},
		{"model only", `{"name":"t","_meta":{"ui":{"visibility":["model"]}}}`, appTool{}},
		{"visible to no one", `{"name":"t","_meta":{"ui":{"visibility":[]}}}`, appTool{appOnly: true}},
		{"no _meta", `{"name":"t"}`, appTool{}},
		{"other _meta", `{"name":"t","_meta":{"x":1}}`, appTool{}},
		{"empty resourceUri", `{"name":"t","_meta":{"ui":{"resourceUri":""}}}`, appTool{}},
		{"malformed ui", `{"name":"t","_meta":{"ui":{"visibility":"app"}}}`, appTool{}},
		{"_meta not an object", `{"name":"t","_meta":[1]}`, appTool{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := appToolOf(json.RawMessage(tt.def)); got != tt.want {
				t.Errorf("appToolOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAppsOutputSchema: a divertable tool keeps its outputSchema only
// when its pointer keeps structuredContent (an MCP Apps tool, with
// max_app_data_bytes not 0); a tool with no threshold always keeps it.
func TestAppsOutputSchema(t *testing.T) {
	const schema = `"outputSchema":{"type":"object","properties":{"hostname":{"type":"string"}},"required":["hostname"]}`
	page := `{"name":"get-system-info","inputSchema":{"type":"object"},` + schema + `,"_meta":{"ui":{"resourceUri":"ui://m/a.html"}}}`
	appOnly := `{"name":"poll","inputSchema":{"type":"object"},` + schema + `,"_meta":{"ui":{"visibility":["app"]}}}`
	plain := `{"name":"read","inputSchema":{"type":"object"},` + schema + `}`
	on := &config.Server{Name: "monitor"}
	off := &config.Server{Name: "monitor", MaxAppDataBytes: config.NoAppData}
	for _, tt := range []struct {
		name       string
		def        string
		sc         *config.Server
		divertable bool
		want       bool
	}{
		{"page tool, divertable", page, on, true, true},
		{"app-only tool, divertable", appOnly, on, true, true},
		{"page tool, max_app_data_bytes = 0", page, off, true, false},
		{"plain tool, divertable", plain, on, true, false},
		{"plain tool, no threshold", plain, on, false, true},
		{"page tool, no threshold", page, off, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			app := appToolOf(json.RawMessage(tt.def))
			raw, err := exposedTool(json.RawMessage(tt.def), "x", dropsSchema(tt.divertable, app, tt.sc))
			if err != nil {
				t.Fatal(err)
			}
			if got := hasMember(raw, "outputSchema"); got != tt.want {
				t.Errorf("outputSchema listed %v, want %v: %s", got, tt.want, raw)
			}
		})
	}
}

// TestAppDivert: an app-only tool is app-only to divert only for a host
// that declared the extension (a host without it shows the tool to its
// model); every app tool's pointer keeps structuredContent up to the
// server's bound.
func TestAppDivert(t *testing.T) {
	sc := &config.Server{Name: "monitor", MaxAppDataBytes: 1000}
	for _, tt := range []struct {
		name    string
		tool    appTool
		s       Session
		byModel bool
		want    divert.Call
	}{
		{"app-only, apps host", appTool{appOnly: true}, &capsSession{caps: apps()}, false, divert.Call{AppOnly: true, KeepStructured: 1000}},
		{"app-only, apps host, through call_tool", appTool{appOnly: true}, &capsSession{caps: apps()}, true, divert.Call{KeepStructured: 1000}},
		{"app-only, other host", appTool{appOnly: true}, &capsSession{}, false, divert.Call{KeepStructured: 1000}},
		{"app-only, no session", appTool{appOnly: true}, nil, false, divert.Call{KeepStructured: 1000}},
		{"page, apps host", appTool{page: true}, &capsSession{caps: apps()}, false, divert.Call{KeepStructured: 1000}},
		{"page, other host", appTool{page: true}, &capsSession{}, false, divert.Call{KeepStructured: 1000}},
		{"no app tool", appTool{}, &capsSession{caps: apps()}, false, divert.Call{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got divert.Call
			var r *Request
			if tt.s != nil || tt.byModel {
				r = &Request{Session: tt.s, ByModel: tt.byModel}
			}
			appDivert(&got, tt.tool, sc, r)
			if got.AppOnly != tt.want.AppOnly || got.KeepStructured != tt.want.KeepStructured {
				t.Errorf("AppOnly %v KeepStructured %d, want %v %d", got.AppOnly, got.KeepStructured, tt.want.AppOnly, tt.want.KeepStructured)
			}
		})
	}
}

// TestAppPage: a ui:// page read by a host that declared the extension is
// never diverted; anything else is a resource like any other.
func TestAppPage(t *testing.T) {
	page := `{"contents":[{"uri":"ui://m/a.html","mimeType":"text/html;profile=mcp-app","text":"<html></html>"}]}`
	for _, tt := range []struct {
		name, uri, raw string
		s              Session
		want           bool
	}{
		{"page, apps host", "ui://m/a.html", page, &capsSession{caps: apps()}, true},
		{"page, other host", "ui://m/a.html", page, &capsSession{}, false},
		{"not ui://", "file:///a.html", page, &capsSession{caps: apps()}, false},
		{"plain html", "ui://m/a.html", `{"contents":[{"uri":"ui://m/a.html","mimeType":"text/html","text":"x"}]}`, &capsSession{caps: apps()}, false},
		{"one of two not a page", "ui://m/a.html", `{"contents":[{"mimeType":"text/html;profile=mcp-app","text":"x"},{"mimeType":"text/plain","text":"y"}]}`, &capsSession{caps: apps()}, false},
		{"no contents", "ui://m/a.html", `{"contents":[]}`, &capsSession{caps: apps()}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := appPage(tt.s, tt.uri, json.RawMessage(tt.raw)); got != tt.want {
				t.Errorf("appPage = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestExtensionsOffered: what upstreams are told of extensions. With no
// single client, the carried ones that have an offer of their own (MCP
// Apps, skills; not tasks, which only a client that declared it gets); with one
// client, the carried ones it declared, as it declared them; a 2026-07-28
// request carries the caller's capabilities less what is not carried.
func TestExtensionsOffered(t *testing.T) {
	ext := func(offer map[string]any) string {
		b, _ := json.Marshal(offer["extensions"])
		return string(b)
	}
	if got, want := ext(DefaultOffer()), `{"io.modelcontextprotocol/skills":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`; got != want {
		t.Errorf("DefaultOffer extensions %s, want %s", got, want)
	}
	for _, tt := range []struct {
		name, caps, want string
	}{
		{"apps host", `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`},
		{"apps and an unknown one", `{"extensions":{"io.modelcontextprotocol/ui":{},"com.example/x":{"a":1}}}`, `{"io.modelcontextprotocol/ui":{}}`},
		{"tasks", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, `{"io.modelcontextprotocol/tasks":{}}`},
		{"skills", `{"extensions":{"io.modelcontextprotocol/skills":{}}}`, `{"io.modelcontextprotocol/skills":{}}`},
		{"only unknown", `{"extensions":{"com.example/x":{}}}`, `null`},
		{"null declaration", `{"extensions":{"io.modelcontextprotocol/ui":null}}`, `null`},
		{"true is no declaration", `{"extensions":{"io.modelcontextprotocol/ui":true}}`, `null`},
		{"none", `{"sampling":{}}`, `null`},
	} {
		t.Run("mirror/"+tt.name, func(t *testing.T) {
			if got := ext(MirrorOffer(json.RawMessage(tt.caps))); got != tt.want {
				t.Errorf("MirrorOffer extensions %s, want %s", got, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name, caps, want string
	}{
		{"carried kept as sent", `{"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["x"]}}}`, `{"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["x"]}}}`},
		{"unknown cut", `{"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":{},"com.example/x":{}}}`, `{"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":{}}}`},
		{"only unknown", `{"elicitation":{},"extensions":{"com.example/x":{}}}`, `{"elicitation":{}}`},
		{"not an object cut", `{"elicitation":{},"extensions":{"io.modelcontextprotocol/ui":true,"io.modelcontextprotocol/skills":null}}`, `{"elicitation":{}}`},
		{"no extensions", `{"sampling":{}}`, `{"sampling":{}}`},
	} {
		t.Run("per request/"+tt.name, func(t *testing.T) {
			var got, want any
			_ = json.Unmarshal(carriedCaps(json.RawMessage(tt.caps)), &got)
			_ = json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("carriedCaps = %v, want %v", got, want)
			}
		})
	}
}
