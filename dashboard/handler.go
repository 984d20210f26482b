package dashboard

import (
	"bytes"
	"embed"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

//go:embed static
var static embed.FS

// Options feed the [Handler].
type Options struct {
	// Owner is the caller's owner as the server's front door proved it
	// ("" without bearer tokens); nil: "". The page shows that owner's
	// calls and agents only.
	Owner func(*http.Request) string
	// Calls returns owner's recent calls, oldest first
	// ([telemetry.Provider.Calls], or [telemetry.ReadAudit] filtered).
	Calls func(owner string) []telemetry.Record
	// Usage returns owner's finished agents' usage records
	// ([budget.ReadUsage] of the owner's usage.jsonl); nil: none.
	Usage func(owner string) []budget.Usage
	// Now is the clock (nil: [time.Now]).
	Now func() time.Time
}

// Handler serves the dashboard, mounted at a path P (e.g. "/dashboard"
// and "/dashboard/"): P itself is the page, with the data of its first
// drawing inside, and P/data.json, P/app.js and P/app.css what the page
// loads (it polls data.json every 5 seconds). Nothing is loaded from
// elsewhere: the page works offline.
func Handler(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	page, _ := static.ReadFile("static/index.html")
	js, _ := static.ReadFile("static/app.js")
	css, _ := static.ReadFile("static/app.css")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		base, file := split(r.URL.Path)
		switch file {
		case "", "index.html":
			body := o.data(r)
			out := bytes.Replace(page, []byte("{{DATA}}"), body, 1)
			out = bytes.ReplaceAll(out, []byte("{{BASE}}"), []byte(htmlAttr(base)))
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(out)
		case "data.json":
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(o.data(r))
		case "app.js":
			h.Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write(js)
		case "app.css":
			h.Set("Content-Type", "text/css; charset=utf-8")
			_, _ = w.Write(css)
		default:
			http.NotFound(w, r)
		}
	})
}

// split cuts a request path into the mount path and the file under it:
// "/dashboard" and "/dashboard/" are the page, "/dashboard/app.js" a file.
func split(path string) (base, file string) {
	for _, f := range []string{"data.json", "app.js", "app.css", "index.html"} {
		if strings.HasSuffix(path, "/"+f) {
			return strings.TrimSuffix(path, "/"+f), f
		}
	}
	if strings.HasSuffix(path, "/") && path != "/" {
		return strings.TrimSuffix(path, "/"), ""
	}
	if i := strings.LastIndexByte(path, '/'); i >= 0 && strings.Contains(path[i+1:], ".") {
		return path[:i], path[i+1:] // an unknown file: 404
	}
	return strings.TrimSuffix(path, "/"), ""
}

func (o Options) data(r *http.Request) []byte {
	owner := ""
	if o.Owner != nil {
		owner = o.Owner(r)
	}
	var calls []telemetry.Record
	if o.Calls != nil {
		calls = o.Calls(owner)
	}
	var usage []budget.Usage
	if o.Usage != nil {
		usage = o.Usage(owner)
	}
	// json.Marshal escapes <, > and &: the bytes are safe inside the
	// page's <script type="application/json">.
	b, err := json.Marshal(Build(owner, calls, usage, o.Now()))
	if err != nil {
		return []byte("{}")
	}
	return b
}

var attrEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;", `'`, "&#39;")

func htmlAttr(s string) string { return attrEscaper.Replace(s) }
