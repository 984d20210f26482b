package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// taskUpstream is a 2026-07-28 upstream with the tasks extension: its
// tool long_job answers with a task, whose first tasks/get says working
// and the next completed, with a big result inlined.
func taskUpstream(t *testing.T) (url string, calls *atomic.Int32) {
	calls = &atomic.Int32{}
	big := strings.Repeat("word ", 5000)
	gets := map[string]int{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name   string `json:"name"`
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		_ = json.Unmarshal(b, &m)
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		calls.Add(1)
		meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"tasks","version":"1"}}`
		var res string
		switch m.Method {
		case "server/discover":
			res = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"ttlMs":0,"cacheScope":"public",` + meta + `}`
		case "tools/list":
			res = `{"resultType":"complete","tools":[{"name":"long_job","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}],"ttlMs":60000,"cacheScope":"public",` + meta + `}`
		case "tools/call":
			res = `{"resultType":"task","taskId":"t-1","status":"working","ttlMs":60000,"pollIntervalMs":10,` + meta + `}`
		case "tasks/get":
			if m.Params.TaskID != "t-1" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32602,"message":"no such task"}}`)
				return
			}
			gets[m.Params.TaskID]++
			if gets[m.Params.TaskID] == 1 {
				res = `{"resultType":"complete","taskId":"t-1","status":"working",` + meta + `}`
			} else {
				res = `{"resultType":"complete","taskId":"t-1","status":"completed","result":{"content":[{"type":"text","text":"` + big + `"}]},` + meta + `}`
			}
		case "tasks/cancel":
			res = `{"resultType":"complete",` + meta + `}`
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"method not found"}}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+res+`}`)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL, calls
}

// TestModernTasks: an upstream's task passes to a 2026-07-28 client
// under an id naming the upstream; tasks/get and tasks/cancel reach it
// with its own id; a completed task's big result is diverted as the
// tool's would be; an id the proxy never gave is refused.
func TestModernTasks(t *testing.T) {
	url, _ := taskUpstream(t)
	up := config.Server{Name: "jobs", Transport: config.TransportHTTPStreamable, URL: url, Protocol: config.ProtocolAuto,
		Timeout: 10 * time.Second, Thresholds: thresholds(t, "long_job", 100)}
	e := startEnv(t, up)
	e.px.AwaitStarted(context.Background(), 10*time.Second)
	ctx := context.Background()
	d := post(t, ctx, e.url, modernBody(1, "server/discover", ""), modernHeaders("server/discover", "")...)
	if !strings.Contains(string(d.body), `"io.modelcontextprotocol/tasks"`) {
		t.Errorf("discover does not declare the upstream's extension: %s", d.body)
	}
	c := post(t, ctx, e.url, modernBody(2, "tools/call", `"name":"long_job"`), modernHeaders("tools/call", "long_job")...)
	var task struct {
		ResultType, TaskID, Status string
	}
	_ = json.Unmarshal(c.last(t)["result"], &task)
	if task.ResultType != "task" || !strings.HasPrefix(task.TaskID, "spt.") || task.Status != "working" || len(e.intercepted()) != 0 {
		t.Fatalf("tools/call: HTTP %d %s", c.status, c.body)
	}
	get := func(id int) modernResp {
		q, _ := json.Marshal(task.TaskID)
		return post(t, ctx, e.url, modernBody(id, "tasks/get", `"taskId":`+string(q)), modernHeaders("tasks/get", task.TaskID)...)
	}
	if g := get(3); !strings.Contains(string(g.body), `"status":"working"`) || !strings.Contains(string(g.body), task.TaskID) {
		t.Errorf("tasks/get, working: HTTP %d %s", g.status, g.body)
	}
	g := get(4)
	if !strings.Contains(string(g.body), `"status":"completed"`) || len(e.intercepted()) != 1 || len(g.body) > 5000 {
		t.Errorf("tasks/get, completed: HTTP %d, intercepted %v, %d bytes", g.status, e.intercepted(), len(g.body))
	}
	q, _ := json.Marshal(task.TaskID)
	if x := post(t, ctx, e.url, modernBody(5, "tasks/cancel", `"taskId":`+string(q)), modernHeaders("tasks/cancel", task.TaskID)...); x.status != 200 || !strings.Contains(string(x.body), `"resultType":"complete"`) {
		t.Errorf("tasks/cancel: HTTP %d %s", x.status, x.body)
	}
	if x := post(t, ctx, e.url, modernBody(6, "tasks/get", `"taskId":"t-1"`), modernHeaders("tasks/get", "t-1")...); x.status != 400 || !strings.Contains(string(x.body), "-32602") {
		t.Errorf("a task id the proxy never gave: HTTP %d %s", x.status, x.body)
	}
}
