// Package appview is scratchpad-mcp's own MCP App (SEP-1865, extension
// io.modelcontextprotocol/ui): a page the host renders for the person,
// showing a stored output whole — a table for arrays of objects (sorted
// and filtered with the exploration tools' RFC 9535 filters, evaluated
// here by package explore), a tree for other JSON, lines with search for
// text — while the model's context holds only the pointer.
//
// The model opens it with [ToolView], whose listing names the page
// ([URI], served as a resource of [MIMEType]); the page pages through
// [ToolPage], an app-only tool (_meta.ui.visibility ["app"]) that hosts
// do not list to the model. Both resolve the calling session's
// [explore.Env], so the page reads what the agent's exploration tools
// may read and nothing else: identity comes from the session, never from
// arguments.
//
// The page is one self-contained HTML file (page.html, embedded): no
// remote script, style or font, so it works offline and under the
// strictest CSP a host applies; the App side of the protocol (a few
// postMessage JSON-RPC calls) is written in it by hand.
package appview

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The names a host and a model see.
const (
	// URI is the page's resource.
	URI = "ui://scratchpad/view.html"
	// MIMEType is an MCP App page's (ext-apps RESOURCE_MIME_TYPE).
	MIMEType = wire.AppMIMEType
	// Extension is the MCP Apps extension's identifier, as a client
	// declares it in capabilities.extensions.
	Extension = wire.ExtensionApps
	// ToolView opens a stored output in the page (model-visible).
	ToolView = "view"
	// ToolPage answers the page's windows (app-only).
	ToolPage = "view_page"
)

//go:embed page.html
var page string

// Page is the page's HTML, as the resource serves it.
func Page() string { return page }

// Resource is the page as an own resource of the server.
func Resource() tool.Resource {
	return tool.Resource{
		URI: URI, Name: "scratchpad view", MIMEType: MIMEType, Extension: Extension,
		Description: "The scratchpad's view of a stored output, for the person at the host.",
		Read:        func(context.Context) (string, error) { return page, nil },
	}
}

// EnvFor resolves the calling session's exploration environment.
type EnvFor func(ctx context.Context) (*explore.Env, error)

type (
	viewArgs struct {
		File string `json:"file" jsonschema:"A stored output's name, as the pointer gives it." arg:"maxLength=4096"`
	}
	pageArgs struct {
		File   string `json:"file" arg:"maxLength=4096"`
		Mode   string `json:"mode" arg:"enum=items|node|lines"`
		Path   string `json:"path,omitempty" arg:"maxLength=4096"`
		Filter string `json:"filter,omitempty" arg:"maxLength=4096"`
		SortBy string `json:"sort_by,omitempty" arg:"maxLength=4096"`
		Order  string `json:"order,omitempty" arg:"enum=asc|desc"`
		Search string `json:"search,omitempty" arg:"maxLength=4096"`
		Offset int    `json:"offset,omitempty" arg:"minimum=0,maximum=1000000000"`
		Limit  int    `json:"limit,omitempty" arg:"minimum=0,maximum=$maxWindow"`
	}
)

var (
	viewDecl = tool.MustArgs[viewArgs](tool.ArgsOptions{})
	pageDecl = tool.MustArgs[pageArgs](tool.ArgsOptions{Vars: map[string]any{"maxWindow": explore.MaxViewWindow}})
)

// Tools are the view's two tools: [ToolView] for the model, [ToolPage]
// for the page only.
func Tools(envFor EnvFor) []tool.Def {
	return []tool.Def{
		{Name: ToolView,
			Description: "Show a stored output to the user in an interactive view (table, tree or text with search; sort, filter, page). Adds nothing to your context.",
			InputSchema: viewDecl.Schema(),
			Annotations: tool.ReadOnly(),
			Meta:        map[string]any{"ui": map[string]any{"resourceUri": URI}},
			Extension:   Extension,
			Handler:     tool.Handle(viewDecl, badArguments, func(ctx context.Context, a viewArgs, _ json.RawMessage) tool.Result { return view(ctx, envFor, a) }),
		},
		{Name: ToolPage,
			Description: "The scratchpad view's pages (for the view, not the model).",
			InputSchema: pageDecl.Schema(),
			Annotations: tool.ReadOnly(),
			Meta:        map[string]any{"ui": map[string]any{"visibility": []string{"app"}}},
			Extension:   Extension,
			Handler:     tool.Handle(pageDecl, badArguments, func(ctx context.Context, a pageArgs, _ json.RawMessage) tool.Result { return pageOf(ctx, envFor, a) }),
		},
	}
}

// view checks that the output is there and says what the person will
// see: a line for the model, the file's name and shape for the page
// (which also has the call's arguments).
func view(ctx context.Context, envFor EnvFor, a viewArgs) tool.Result {
	env, err := envFor(ctx)
	if err != nil {
		return tool.Error(err.Error())
	}
	var what string
	if top, err := explore.ViewNode(ctx, env, a.File, "$", explore.Window{Limit: 100}); err == nil {
		// What the page opens on: the array itself, or the first
		// non-empty array under the top object, as a table.
		switch {
		case top.Type == "array":
			what = fmt.Sprintf("%s, %s items", top.Kind, explore.Comma(top.Total))
		default:
			what = fmt.Sprintf("%s %s", top.Kind, top.Type)
			for _, c := range top.Children {
				if c.Type == "array" && c.Len > 0 {
					what = fmt.Sprintf("%s; %s: %s items", top.Kind, c.Path, explore.Comma(c.Len))
					break
				}
			}
		}
	} else {
		// Not a tree (text, JSON that does not parse) or not there: the
		// line count, which builds the file's line index, or the refusal.
		lines, err := explore.ViewLines(ctx, env, a.File, "", explore.Window{Limit: 1})
		if err != nil {
			return refusal(err)
		}
		what = fmt.Sprintf("%s, %s lines", lines.Kind, explore.Comma(lines.Total))
	}
	return tool.Text(fmt.Sprintf("The user can now see %s (%s) in the scratchpad view; none of it was added to your context.", a.File, what))
}

// pageOf answers one window for the page, as JSON; a problem the person
// can fix is the exploration tools' error object.
func pageOf(ctx context.Context, envFor EnvFor, a pageArgs) tool.Result {
	env, err := envFor(ctx)
	if err != nil {
		return tool.Error(err.Error())
	}
	release, err := env.Slot()
	if err != nil {
		return errorObject("busy", err.Error())
	}
	defer release()
	w := explore.Window{Offset: a.Offset, Limit: a.Limit}
	var out any
	switch a.Mode {
	case "items":
		out, err = explore.ViewItems(ctx, env, a.File, explore.ItemsQuery{Path: a.Path, Filter: a.Filter, SortBy: a.SortBy, Order: a.Order, Window: w})
	case "node":
		out, err = explore.ViewNode(ctx, env, a.File, a.Path, w)
	default:
		out, err = explore.ViewLines(ctx, env, a.File, a.Search, w)
	}
	if err != nil {
		return refusal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return tool.Error(err.Error())
	}
	return tool.Text(string(b))
}

// refusal is the answer of a view refused: the exploration tools' JSON
// object when the person can fix it, an error otherwise.
func refusal(err error) tool.Result {
	var r *explore.Refusal
	if errors.As(err, &r) {
		return tool.Text(string(r.Answer))
	}
	return tool.Error(err.Error())
}

func errorObject(code, msg string) tool.Result {
	b, _ := json.Marshal(map[string]string{"error": code, "message": msg})
	return tool.Text(string(b))
}

func badArguments(problems []tool.Problem) tool.Result {
	return errorObject("invalid_arguments", strings.Join(tool.Messages(problems), "; ")+".")
}
