package server

import (
	"net/http"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
)

// ownerOf is the owner of the Caller of r; "" for no request (stdio).
func ownerOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	return frontdoor.CallerOf(r.Context()).Owner
}
