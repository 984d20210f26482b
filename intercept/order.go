package intercept

import (
	"context"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// addOrderHooks makes tools/list, resources/list,
// resources/templates/list and prompts/list list the upstreams' items as
// the upstreams list them (servers in config order), after the proxy's
// own, instead of mcp-go's order by name: clients show lists in the order
// they get them, and a server's order is part of what it offers.
func (r *Router) addOrderHooks(h *server.Hooks) {
	h.AddAfterListTools(func(ctx context.Context, id any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
		if res == nil {
			return
		}
		r.mu.RLock()
		routes := r.routes
		r.mu.RUnlock()
		sortByOrder(res.Tools, func(t mcp.Tool) int {
			if rt := routes[t.Name]; rt != nil {
				return rt.order
			}
			return -1
		})
	})
	h.AddAfterListResources(func(ctx context.Context, id any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		if res == nil {
			return
		}
		r.cat.mu.RLock()
		items := r.cat.res
		r.cat.mu.RUnlock()
		sortByOrder(res.Resources, func(v mcp.Resource) int { return itemOrder(items, v.URI) })
	})
	h.AddAfterListResourceTemplates(func(ctx context.Context, id any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		if res == nil {
			return
		}
		r.cat.mu.RLock()
		items := r.cat.tmpl
		r.cat.mu.RUnlock()
		sortByOrder(res.ResourceTemplates, func(v mcp.ResourceTemplate) int {
			if v.URITemplate == nil {
				return -1
			}
			return itemOrder(items, v.URITemplate.Raw())
		})
	})
	h.AddAfterListPrompts(func(ctx context.Context, id any, _ *mcp.ListPromptsRequest, res *mcp.ListPromptsResult) {
		if res == nil {
			return
		}
		r.cat.mu.RLock()
		items := r.cat.prompts
		r.cat.mu.RUnlock()
		sortByOrder(res.Prompts, func(v mcp.Prompt) int { return itemOrder(items, v.Name) })
	})
}

// itemOrder is an exposed item's position; -1 (first) for the proxy's own.
func itemOrder(items map[string]*itemRoute, key string) int {
	if rt := items[key]; rt != nil {
		return rt.order
	}
	return -1
}

// sortByOrder sorts items by order, keeping the relative order of equal
// keys (the proxy's own items stay as mcp-go listed them).
func sortByOrder[T any](items []T, order func(T) int) {
	sort.SliceStable(items, func(i, j int) bool { return order(items[i]) < order(items[j]) })
}
