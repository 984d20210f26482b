package pad

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

func TestRenderModesParse(t *testing.T) {
	p := newPad(t, Options{})
	mustUpdate(t, p, Patch{Section: "Findings", Op: OpAppend, Content: `a <b> & "c"`},
		Patch{Section: "Open questions", Op: OpAppend, Content: "q1\nq2"})
	if _, err := p.Append("note with <xml> & json \" chars", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	v, err := p.View(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("xml", func(t *testing.T) {
		out := p.Render(v, RenderXML)
		dec := xml.NewDecoder(strings.NewReader(out))
		for {
			_, err := dec.Token()
			if err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Fatalf("invalid XML: %v\n%s", err, out)
			}
		}
		if !strings.Contains(out, `<section name="Plan" cap="800" chars="0" numbered="true"`) || !strings.Contains(out, "\n- q1\n- q2\n</section>") {
			t.Fatalf("xml:\n%s", out)
		}
	})
	t.Run("json", func(t *testing.T) {
		var jv jsonView
		if err := json.Unmarshal([]byte(p.Render(v, RenderJSON)), &jv); err != nil {
			t.Fatal(err)
		}
		if len(jv.Sections) != 6 || jv.Sections[2].Content != `- a <b> & "c"` || jv.Total != 1 {
			t.Fatalf("json view: %+v", jv)
		}
	})
	t.Run("markdown", func(t *testing.T) {
		out := p.Render(v, RenderMarkdown)
		for _, want := range []string{"- Findings (13/1500): Facts established", "## Plan\n(empty)", "## Ledger (append_scratchpad; 1 entry, newest last)", "[x] note with <xml>"} {
			if !strings.Contains(out, want) {
				t.Errorf("markdown lacks %q:\n%s", want, out)
			}
		}
	})
}

func TestMaxTokensFoldsOldestEntries(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := Options{MaxTokens: 400, Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	p := newPad(t, opts)
	mustUpdate(t, p, Patch{Section: "Findings", Op: OpAppend, Content: strings.Repeat("f", 200)})
	for i := 0; i < 40; i++ {
		if _, err := p.Append(fmt.Sprintf("finding number %02d with some words", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []string{RenderMarkdown, RenderXML, RenderJSON} {
		t.Run(mode, func(t *testing.T) {
			v, _ := p.View(nil)
			out := p.Render(v, mode)
			if n := roughCount(out); n > 400 {
				t.Fatalf("rendering is %d tokens, over 400", n)
			}
			if !strings.Contains(out, strings.Repeat("f", 200)) {
				t.Fatal("a section was cut")
			}
			if !strings.Contains(out, "finding number 39") {
				t.Fatal("the newest entry was folded")
			}
			if strings.Contains(out, "finding number 00") {
				t.Fatal("the oldest entry was kept")
			}
			if mode == RenderMarkdown && !strings.Contains(out, " earlier findings omitted") {
				t.Fatalf("no fold line:\n%s", out)
			}
		})
	}
	t.Run("sections alone over the bound", func(t *testing.T) {
		small := newPad(t, Options{MaxTokens: 50})
		mustUpdate(t, small, Patch{Section: "Findings", Op: OpAppend, Content: strings.Repeat("g", 400)})
		out, _ := small.Read(nil)
		if !strings.Contains(out, strings.Repeat("g", 400)) || !strings.Contains(out, "over max_tokens 50") {
			t.Fatalf("read:\n%s", out)
		}
	})
}

func TestLedgerTagsTTLAndCompaction(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPad(t, Options{EntryTTL: time.Hour, Now: func() time.Time { return now }})
	for i, tags := range [][]string{{"db"}, {"api"}, {"db", "api"}, nil} {
		if _, err := p.Append(fmt.Sprintf("old %d", i), tags); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Hour)
	if _, err := p.Append("fresh", []string{"db"}); err != nil {
		t.Fatal(err)
	}
	before, _, _ := readLedger(memdir.At(p.Dir()))
	if len(before) != 5 {
		t.Fatalf("ledger has %d entries", len(before))
	}
	v, err := p.View([]string{"db"})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Entries) != 1 || v.Entries[0].Note != "fresh" {
		t.Fatalf("entries = %+v", v.Entries)
	}
	// 4 of 5 expired: the read compacted the file.
	after, _, _ := readLedger(memdir.At(p.Dir()))
	if len(after) != 1 {
		t.Fatalf("after compaction the ledger has %d entries", len(after))
	}
	if _, err := p.Append("   ", nil); err == nil {
		t.Fatal("empty note accepted")
	}
	if _, err := p.Append(strings.Repeat("n", maxNoteChars+1), nil); err == nil {
		t.Fatal("over-long note accepted")
	}
}

func TestTornLedgerLineSkippedAndNextAppendWhole(t *testing.T) {
	p := newPad(t, Options{})
	if _, err := p.Append("first", nil); err != nil {
		t.Fatal(err)
	}
	// Simulate a crash mid-write: half a line, no newline.
	f, _ := openAppend(p)
	f.WriteString(`{"ts":"2026-01-01T00:00:00Z","no`)
	f.Close()
	if _, err := p.Append("second", nil); err != nil {
		t.Fatal(err)
	}
	v, err := p.View(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Entries) != 2 || v.Entries[1].Note != "second" {
		t.Fatalf("entries = %+v", v.Entries)
	}
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "1 unreadable ledger line") {
		t.Fatalf("warnings = %q", v.Warnings)
	}
}

func TestFoldIsNearMinimal(t *testing.T) {
	p := newPad(t, Options{})
	mustUpdate(t, p, Patch{Section: "Findings", Op: OpAppend, Content: "base"})
	for i := 0; i < 120; i++ {
		if _, err := p.Append(fmt.Sprintf("finding %d %s", i, strings.Repeat("w", i%37)), []string{"t"}); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := p.View(nil)
	for _, mode := range []string{RenderMarkdown, RenderXML, RenderJSON} {
		for _, max := range []int{600, 900, 1500, 2500} {
			p.opts.MaxTokens = max
			out := p.Render(v, mode)
			if roughCount(out) > max {
				t.Fatalf("%s/%d: %d tokens", mode, max, roughCount(out))
			}
			kmin := 0
			for roughCount(renderView(v, mode, kmin, "")) > max {
				kmin++
			}
			// Which fold was used: the first entry shown.
			k := len(v.Entries)
			for i, e := range v.Entries {
				if strings.Contains(out, e.Note+"\n") || strings.Contains(out, e.Note+"<") || strings.Contains(out, e.Note+`"`) {
					k = i
					break
				}
			}
			if k < kmin || k > kmin+4 {
				t.Errorf("%s/%d: folded %d entries, minimal is %d", mode, max, k, kmin)
			}
		}
	}
}
