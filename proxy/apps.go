package proxy

import (
	"encoding/json"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// MCP Apps (SEP-1865, @modelcontextprotocol/ext-apps): everything the
// proxy knows of the extension is in this file.
//
// A tool names a ui:// page in its listing's _meta.ui.resourceUri; the
// host renders it and hands it the tool's result (ui/notifications/
// tool-result), while the model reads the result's content. A tool whose
// _meta.ui.visibility leaves out "model" is for the page only: the host
// never shows it to the model.

// AppsExtension is the MCP Apps extension's id in capabilities.extensions.
const AppsExtension = wire.ExtensionApps

// appsOffer is what the proxy declares for MCP Apps to an upstream when no
// single client is known: the page type it carries (the only one the
// extension defines). Pages are resources, read and forwarded as bytes.
var appsOffer = json.RawMessage(`{"mimeTypes":["` + appsPageType + `"]}`)

// appsPageType is the MIME type of an MCP Apps page.
const appsPageType = wire.AppMIMEType

// appTool is what a tool's listing says of MCP Apps.
type appTool struct {
	// page: the tool names a page (_meta.ui.resourceUri, or the
	// deprecated flat _meta["ui/resourceUri"]).
	page bool
	// appOnly: _meta.ui.visibility is given and leaves out "model".
	appOnly bool
}

// app reports whether the tool is an MCP Apps tool at all: its
// structuredContent is for a page.
func (t appTool) app() bool { return t.page || t.appOnly }

// appToolOf reads a tool definition's _meta.ui. A malformed _meta is no
// app tool: the tool is then handled as any other.
func appToolOf(def json.RawMessage) appTool {
	var t appTool
	meta, ok := jsonscan.Lookup(def, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return t
	}
	var m struct {
		UI *struct {
			ResourceURI *string   `json:"resourceUri"`
			Visibility  *[]string `json:"visibility"`
		} `json:"ui"`
		Flat *string `json:"ui/resourceUri"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return t
	}
	t.page = m.Flat != nil && *m.Flat != ""
	if m.UI == nil {
		return t
	}
	t.page = t.page || m.UI.ResourceURI != nil && *m.UI.ResourceURI != ""
	if v := m.UI.Visibility; v != nil {
		t.appOnly = true
		for _, who := range *v {
			if who == "model" {
				t.appOnly = false
			}
		}
	}
	return t
}

// keepsSchema reports whether a tool that can be diverted keeps its
// outputSchema: an MCP Apps tool's pointer keeps the result's
// structuredContent (up to max_app_data_bytes), so the schema still
// holds; any other tool's pointer has none.
func (t appTool) keepsSchema(sc *config.Server) bool {
	return t.app() && sc.AppDataBytes() > 0
}

// dropsSchema is the rule of a listed tool's outputSchema: dropped for a
// tool that can be diverted (divertable: it has a threshold) unless its
// pointer keeps structuredContent; a tool diverted only over budget keeps
// it (its pointer is then an error result, divert.Call.SchemaListed).
func dropsSchema(divertable bool, t appTool, sc *config.Server) bool {
	return divertable && !t.keepsSchema(sc)
}

// hiddenFromModel is what r's model must not be shown of the upstream
// tools: an MCP Apps host hides app-only tools (visibility ["app"]) from
// its model, so search_tools does too; nil (nothing hidden) for any
// other client, which shows every tool to its model.
func (p *Proxy) hiddenFromModel(r *Request) func(*route) bool {
	if s := r.session(); s == nil || !s.Capabilities().Declares(AppsExtension) {
		return nil
	}
	return func(rt *route) bool { return rt.app.appOnly }
}

// appDivert sets what divert must know of an MCP Apps tool's call: an
// app-only tool called by a host that declared the extension never
// reaches the model (a host without it shows the tool to its model like
// any other, and a call through call_tool is the model's: both are
// diverted like any other); an app tool's pointer keeps its
// structuredContent for the page.
func appDivert(c *divert.Call, t appTool, sc *config.Server, r *Request) {
	if !t.app() {
		return
	}
	s := r.session()
	c.AppOnly = t.appOnly && s != nil && !r.ByModel && s.Capabilities().Declares(AppsExtension)
	c.KeepStructured = sc.AppDataBytes()
}

// appPage reports whether a resources/read result raw, of the upstream's
// URI uri, is an MCP Apps page read by a host that declared the
// extension: a ui:// URI whose every content is of the page type. The
// host renders it in a frame; the model never reads it, so it is never
// diverted nor charged (a 400 KB page would otherwise be a pointer the
// host cannot render).
func appPage(s Session, uri string, raw json.RawMessage) bool {
	if !strings.HasPrefix(uri, "ui://") || s == nil || !s.Capabilities().Declares(AppsExtension) {
		return false
	}
	var res struct {
		Contents []struct {
			MimeType string `json:"mimeType"`
		} `json:"contents"`
	}
	if json.Unmarshal(raw, &res) != nil || len(res.Contents) == 0 {
		return false
	}
	for _, c := range res.Contents {
		if c.MimeType != appsPageType {
			return false
		}
	}
	return true
}
