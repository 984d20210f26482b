package frontdoor_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
)

// TestFrontDoorTokensNow (issue 38 item 13): with TokensNow the tokens in
// force are asked per request, so a token taken out is refused on the next
// request; and with none left every request is refused, never let in as
// if no tokens were configured.
func TestFrontDoorTokensNow(t *testing.T) {
	var mu sync.Mutex
	now := testTokens
	h := frontdoor.FrontDoor(frontdoor.FrontDoorOptions{TokensNow: func() []config.Token {
		mu.Lock()
		defer mu.Unlock()
		return now
	}}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(frontdoor.CallerOf(r.Context()).Owner))
	}))
	for _, step := range []struct {
		name   string
		tokens []config.Token
		token  string
		status int
	}{
		{"alice in force", testTokens, "alice-token", http.StatusOK},
		{"alice revoked", testTokens[1:], "alice-token", http.StatusUnauthorized},
		{"bob still", testTokens[1:], "bob-token", http.StatusOK},
		{"none left", nil, "bob-token", http.StatusUnauthorized},
		{"none left, no token", nil, "", http.StatusUnauthorized},
	} {
		mu.Lock()
		now = step.tokens
		mu.Unlock()
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		if step.token != "" {
			req.Header.Set("Authorization", "Bearer "+step.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != step.status {
			t.Errorf("%s: HTTP %d, want %d (%s)", step.name, rec.Code, step.status, rec.Body)
		}
	}
}
