package upstream

import (
	"net/http"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// do is hc.Do with the URL in its error masked ([config.RedactURL]):
// such errors reach logs and, as tool errors, the model.
func do(hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	return resp, config.RedactURLError(err)
}
