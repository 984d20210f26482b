package redact

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// lookAlikeFile is the look-alike corpus, written once by
// `go test -run TestLookAlikes -update-corpus` and kept in the tree: one
// look-alike per line.
const lookAlikeFile = "testdata/lookalikes.txt"

// TestLookAlikes: commit ids, UUIDs, image digests, npm integrity
// strings, base64 image data (as a data: URL and as an image block's
// "data") and base64 JSON are kept: at most 1 in 20 altered. The figure
// is logged (and written in the package doc and NOTES.md).
func TestLookAlikes(t *testing.T) {
	if os.Getenv("REDACT_UPDATE_CORPUS") != "" {
		r := rand.New(rand.NewPCG(11, 12))
		if err := os.WriteFile(lookAlikeFile, []byte(strings.Join(lookAlikes(r, 1400), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(lookAlikeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var items []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		items = append(items, sc.Text())
	}
	red := mustNew(t, Options{})
	gen := mustNew(t, Options{Entropy: true})
	for _, tc := range []struct {
		name string
		r    *Redactor
		max  float64
	}{{"default rules", red, 0.05}, {"with the generic rules", gen, 1}} {
		altered, byKind := 0, map[string]int{}
		for i, it := range items {
			// In a text block (in one of the contexts they come in) and as
			// an image block's data.
			in, _ := json.Marshal(map[string]any{"content": []map[string]any{
				{"type": "text", "text": fmt.Sprintf(lookAlikeContexts[i%len(lookAlikeContexts)], it)},
				{"type": "image", "mimeType": "image/png", "data": it},
			}})
			out, rep, err := tc.r.JSON(nil, in)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != string(in) || rep.Total > 0 {
				altered++
				for k, n := range rep.Counts {
					byKind[k] += n
				}
			}
		}
		rate := float64(altered) / float64(len(items))
		t.Logf("%s: %d of %d look-alikes altered (%.2f%%) %v", tc.name, altered, len(items), 100*rate, byKind)
		if rate > tc.max {
			t.Errorf("%s: %.2f%% altered, over %.0f%%", tc.name, 100*rate, 100*tc.max)
		}
	}
}

// lookAlikeContexts are the lines look-alikes are written in.
var lookAlikeContexts = []string{
	"value: %s\n", `"integrity": "%s",`, "commit %s (HEAD -> main)", "digest: %s", `{"id":"%s","status":"ok"}`,
	"key_id=%s", "request token_id: %s", "ETag: \"%s\"", "checksum/config: %s", "Authorization-Request-Id: %s",
}

// plantedCorpus is a 3,000-line service log and a config dump with
// credentials of every default kind planted in them, and what was
// planted.
func plantedCorpus(seed uint64) (logText, configDump string, ps []planted) {
	r := rand.New(rand.NewPCG(seed, seed))
	lines := logLines(r, 3000)
	for i := 0; i < len(lines); i += 47 {
		p := plant(r, plantedKinds[(i/47)%len(plantedKinds)])
		ps = append(ps, p)
		lines[i] += " " + strings.ReplaceAll(p.Text, "\n", "\\n") // a log line is one line
		if p.Kind == "private-key" {
			ps[len(ps)-1].Secret = strings.ReplaceAll(p.Secret, "\n", "\\n")
		}
	}
	var cfg strings.Builder
	cfg.WriteString("# /etc/app/config.env, dumped by the ops tool\n")
	for i, k := range plantedKinds {
		p := plant(r, k)
		ps = append(ps, p)
		fmt.Fprintf(&cfg, "SETTING_%d=%d\nREGION=eu-west-1\nCOMMIT=%s\nREQUEST_ID=%s\n%s\n", i, r.IntN(1000), randStr(r, hexd, 40), uuid(r), p.Text)
	}
	cfg.WriteString(k8sListing(r, 20))
	return strings.Join(lines, "\n"), cfg.String(), ps
}

// TestPlantedCorpus: on the planted log and config dump every planted
// secret is masked (recall 100%), and precision is measured: masks over
// text that was not planted are false positives.
func TestPlantedCorpus(t *testing.T) {
	logText, cfg, ps := plantedCorpus(42)
	red := mustNew(t, Options{})
	found := 0
	var falsePos []string
	for _, doc := range []string{logText, cfg} {
		in := toolResult(doc)
		out, rep, err := red.JSON(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		text, _ := resultText(out)
		for _, p := range ps {
			if strings.Contains(text, p.Secret) {
				t.Errorf("%s left in the output: %.80s", p.Kind, p.Secret)
			}
		}
		// Every finding is planted, or it is a false positive.
		for _, f := range rep.Findings {
			var s string
			_ = json.Unmarshal([]byte(`"`+string(in[f.Start:f.End])+`"`), &s)
			// A private key's mask also covers the line breaks around its
			// body (written \n in a log line).
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, `\n`), `\n`))
			ok := false
			for _, p := range ps {
				if strings.Contains(p.Secret, s) && s != "" {
					ok = true
					break
				}
			}
			if ok {
				found++
			} else {
				falsePos = append(falsePos, f.Kind+" "+s)
			}
		}
		if rep.More > 0 {
			t.Fatalf("raise MaxFindings for this test: %d more", rep.More)
		}
	}
	recall := float64(found) / float64(len(ps))
	precision := float64(found) / float64(found+len(falsePos))
	t.Logf("planted %d (log %d lines, config dump %d bytes): recall %.1f%%, precision %.1f%%, false positives %q",
		len(ps), strings.Count(logText, "\n")+1, len(cfg), 100*recall, 100*precision, falsePos)
	if found != len(ps) {
		t.Errorf("found %d of %d planted", found, len(ps))
	}
}

// FuzzJSONValid: masking keeps valid JSON valid, and masked text scanned
// again does not change.
func FuzzJSONValid(f *testing.F) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, k := range plantedKinds {
		p := plant(r, k)
		f.Add(toolResult(p.Text))
		f.Add(toolResult(mustJSON(map[string]string{"k": p.Text})))
		f.Add([]byte(`["` + strings.ReplaceAll(p.Secret, "/", `\/`) + `",1,{"` + p.Text[:len(p.Text)/2] + `":null}]`))
	}
	f.Add([]byte(`{"a":"postgres:\/\/u:p4ssw0rdXYZ@h","b":"\u0041KIAQWERTYUIOPASDFGH"}`))
	f.Add([]byte(`"AKIAQWERTYUIOPASDFG\nH"`))
	red := mustNew(f, Options{Extra: []Pattern{{ID: "digits", Regex: `[0-9]{6,}`}}})
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := red.JSON(nil, in)
		if err != nil {
			return
		}
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("valid in, invalid out:\n in %q\nout %q", in, out)
		}
		again, rep, _ := red.JSON(nil, out)
		if string(again) != string(out) {
			t.Fatalf("not idempotent (%v):\n%q\n%q", rep.Counts, out, again)
		}
	})
}
