package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMappedFilesAnswerAsRead: with [Env.MapFiles] every tool answers
// exactly as it does on the file read into memory, for a JSON document, a
// log and NDJSON past [MinMapBytes], and for a small file (read either way).
func TestMappedFilesAnswerAsRead(t *testing.T) {
	dir := t.TempDir()
	var js, log, nd strings.Builder
	js.WriteString(`{"items":[`)
	for i := range 20000 {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `{"id":%d,"name":"item-%d","size":"%d","tags":["a","b"]}`, i, i, i*7%1000)
		fmt.Fprintf(&log, "2026-12-07T20:%02d:%02dZ level=info msg=\"request %d served\" bytes=%d\n", i/60%60, i%60, i, i*13)
		fmt.Fprintf(&nd, `{"n":%d,"ok":%v,"note":"row %d of the export, kept as it came"}`+"\n", i, i%3 == 0, i)
	}
	js.WriteString(`]}`)
	files := map[string]string{"big.json": js.String(), "app.log": log.String(), "rows.ndjson": nd.String(), "small.json": `{"a":[1,2,3]}`}
	for name, body := range files {
		if name != "small.json" && len(body) < MinMapBytes {
			t.Fatalf("%s is %d bytes: under MinMapBytes, it proves nothing", name, len(body))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{ToolGetIn, map[string]any{"file": "big.json", "path": "$.items[19999]"}},
		{ToolIterateOver, map[string]any{"file": "big.json", "path": "$.items[?@.size > 990]", "fields": "id,size", "limit": 5}},
		{ToolCountBy, map[string]any{"file": "big.json", "path": "$.items", "group_by": "size", "top": 3}},
		{ToolSchema, map[string]any{"file": "big.json"}},
		{ToolGrep, map[string]any{"file": "app.log", "pattern": "request 1999[0-9] ", "max_matches": 3}},
		{ToolSlice, map[string]any{"file": "app.log", "start": 6000, "end": 6003}},
		{ToolCountBy, map[string]any{"file": "rows.ndjson", "path": "$", "group_by": "ok"}},
		{ToolHead, map[string]any{"file": "small.json"}},
	}
	if runtime.GOOS != "windows" {
		for _, name := range []string{"big.json", "app.log", "rows.ndjson", "small.json"} {
			d, err := load(&Env{Root: root, Count: wordCount, MapFiles: true}, name)
			if err != nil || d.mapped != (name != "small.json") {
				t.Fatalf("%s: mapped %v (%v): want a mapping for files past MinMapBytes only", name, d != nil && d.mapped, err)
			}
		}
	}
	for _, c := range calls {
		var got [2]string
		for i, mapped := range []bool{false, true} {
			env := &Env{Root: root, Count: wordCount, MapFiles: mapped}
			got[i] = Call(context.Background(), env, c.tool, c.args).Text
		}
		if got[0] != got[1] {
			t.Errorf("%s %v:\nread:   %s\nmapped: %s", c.tool, c.args, got[0], got[1])
		}
		if strings.HasPrefix(got[0], `{"error"`) {
			t.Errorf("%s %v: %s", c.tool, c.args, got[0])
		}
	}
}
