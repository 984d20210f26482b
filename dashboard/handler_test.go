package dashboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// byOwner hands each owner its own records only, as the server's
// provider does.
func byOwner(recs []telemetry.Record) func(string) []telemetry.Record {
	return func(owner string) []telemetry.Record {
		var out []telemetry.Record
		for _, r := range recs {
			if r.Owner == owner {
				out = append(out, r)
			}
		}
		return out
	}
}

// TestHandlerShowsOnlyTheOwnersOwn: the owner the front door proved (here
// a header the test's Owner reads) sees its own calls in the page and in
// data.json, never another's.
func TestHandlerShowsOnlyTheOwnersOwn(t *testing.T) {
	recs := []telemetry.Record{
		{Time: t0, Owner: "alice", Server: "github", Tool: "search", Diverted: 5000, File: "scratchpad/alice-secret-listing.json"},
		{Time: t0, Owner: "bob", Server: "github", Tool: "search", Diverted: 7000, File: "scratchpad/bob-listing.json"},
	}
	h := Handler(Options{
		Owner: func(r *http.Request) string { return r.Header.Get("X-Test-Owner") },
		Calls: byOwner(recs),
		Usage: func(owner string) []budget.Usage { return []budget.Usage{{Owner: owner, Calls: len(owner)}} },
	})
	for _, tc := range []struct{ owner, path, want, not string }{
		{"bob", "/dashboard", "bob-listing.json", "alice"},
		{"bob", "/dashboard/data.json", `"owner":"bob"`, "alice"},
		{"alice", "/dashboard/", "alice-secret-listing.json", "bob"},
		{"", "/dashboard/data.json", `"total":0`, "listing"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Header.Set("X-Test-Owner", tc.owner)
		h.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != 200 || !strings.Contains(body, tc.want) || strings.Contains(body, tc.not) {
			t.Errorf("%s %s: %d, want %q and no %q:\n%.400s", tc.owner, tc.path, rec.Code, tc.want, tc.not, body)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard/data.json", nil))
	var d Data
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("data.json: %v %q", err, rec.Header().Get("Content-Type"))
	}
}

// TestHandlerServesOfflinePage: the page loads its script and style
// from the same mount path, references no other host, and is served with
// a CSP that forbids any other; unknown files are 404, writes 405.
func TestHandlerServesOfflinePage(t *testing.T) {
	h := Handler(Options{Calls: byOwner(nil)})
	get := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	page := get("GET", "/ops/dashboard")
	body := page.Body.String()
	for _, want := range []string{`href="/ops/dashboard/app.css"`, `src="/ops/dashboard/app.js"`, `data-base="/ops/dashboard"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, path := range []string{"/ops/dashboard/app.js", "/ops/dashboard/app.css"} {
		r := get("GET", path)
		if r.Code != 200 || regexp.MustCompile(`https?://`).MatchString(r.Body.String()+body) {
			t.Errorf("%s: %d, or a remote URL", path, r.Code)
		}
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	for path, code := range map[string]int{"/ops/dashboard/x.png": 404, "/ops/dashboard/data.json": 200} {
		if r := get("GET", path); r.Code != code {
			t.Errorf("%s: %d, want %d", path, r.Code, code)
		}
	}
	if r := get("POST", "/ops/dashboard"); r.Code != 405 {
		t.Errorf("POST: %d", r.Code)
	}
}
