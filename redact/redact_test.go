package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var maskInText = regexp.MustCompile(`\[REDACTED:([a-z0-9-]+):([0-9a-f]{4})\]`)

// masksByKind counts the masks in text by kind.
func masksByKind(text string) map[string]int {
	m := map[string]int{}
	for _, s := range maskInText.FindAllStringSubmatch(text, -1) {
		m[s[1]]++
	}
	return m
}

func mustNew(t testing.TB, o Options) *Redactor {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDefaultKinds plants every default kind in the text of a tools/call
// result in many positions and escapings; each must be masked whole (its
// kind counted, nothing of it left) and the result stay valid JSON.
func TestDefaultKinds(t *testing.T) {
	red := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(3, 4))
	filler := strings.Repeat("lorem ipsum dolor sit amet, 0123456789 ", 1000) // 39 KB
	for _, kind := range plantedKinds {
		ps := []planted{plant(r, kind), plant(r, kind), plant(r, kind)}
		cases := []struct {
			name string
			text string
			n    int
			json bool // the text is itself JSON (escaped twice on the wire)
		}{
			{"alone", ps[0].Text, 1, false},
			{"in context", ps[0].Text, 1, false},
			{"start of string", ps[0].Text + "\ntrailing words", 1, false},
			{"end of string", "leading words\n" + ps[0].Text, 1, false},
			{"escapes around", "a\n\t\"" + ps[0].Text + "\"\r\n/path\\x", 1, false},
			{"after an escaped newline", "line one\n" + ps[0].Text + "\nline three", 1, false},
			{"html escapes", "<b>" + ps[0].Text + "</b> & more", 1, false},
			{"three in one string", ps[0].Text + "\n" + ps[1].Text + " and " + ps[2].Text, 3, false},
			{"same twice", ps[0].Text + "\n" + ps[0].Text, 2, false},
			{"deep in many KB", filler + ps[0].Text + "\n" + filler + ps[1].Text, 2, false},
			{"across a chunk boundary", filler[:chunk-40] + ps[0].Text + "\n" + filler, 1, false},
			{"text that is JSON", mustJSON(map[string]string{"config": ps[0].Text, "other": ps[1].Text}), 2, true},
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				in := toolResult(tc.text)
				out, rep, err := red.JSON(nil, in)
				if err != nil {
					t.Fatal(err)
				}
				if !json.Valid(out) {
					t.Fatalf("output is not valid JSON:\n%s", out)
				}
				text, err := resultText(out)
				if err != nil {
					t.Fatal(err)
				}
				if tc.json { // the secrets are inside a JSON text: decode it
					var m map[string]string
					if err := json.Unmarshal([]byte(text), &m); err != nil {
						t.Fatalf("the inner JSON broke: %v\n%s", err, text)
					}
					text = m["config"] + "\n" + m["other"]
				}
				for _, p := range ps {
					if strings.Contains(text, p.Secret) {
						t.Errorf("secret left in the output:\n%.600s", text)
					}
				}
				if got := masksByKind(text)[kind]; got != tc.n {
					t.Errorf("%d masks of %s, want %d (all: %v):\n%.600s", got, kind, tc.n, masksByKind(text), text)
				}
				if rep.Counts[kind] != tc.n || rep.Total != tc.n {
					t.Errorf("report %v (total %d), want %d %s", rep.Counts, rep.Total, tc.n, kind)
				}
			})
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestEscapedSecrets: secrets written with escapes inside them (\/ in a
// URL, \u escapes of ordinary letters) are found on their decoded text,
// and the mask replaces whole escapes.
func TestEscapedSecrets(t *testing.T) {
	red := mustNew(t, Options{})
	for _, tc := range []struct{ name, raw, kind string }{
		{"escaped slashes", `{"t":"DATABASE_URL=postgres:\/\/app:Zk8fQ2mWx91@db:5432\/app"}`, "url-password"},
		{"u-escaped letters", `{"t":"token ghp_\u0061B3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5 end"}`, "github-pat"},
		{"escape right before", `{"t":"\nAKIAQWERTYUIOPASDFGH\n"}`, "aws-access-token"},
		{"u-escape inside", `{"t":"ghp_aB3dE5gH7jK9mN1p\u0051\u00333sT5vW7yZ9bC1dE3fG5"}`, "github-pat"},
		{"pem with escaped newlines", `{"t":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4\/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n-----END PRIVATE KEY-----"}`, "private-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep, err := red.JSON(nil, []byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(out) || rep.Counts[tc.kind] != 1 {
				t.Fatalf("counts %v, valid %v:\n%s", rep.Counts, json.Valid(out), out)
			}
			if bytes.Contains(out, []byte(`\[`)) || bytes.Contains(out, []byte(`\u00[R`)) {
				t.Errorf("an escape was cut: %s", out)
			}
		})
	}
}

// TestNoCap: every secret is found however many there are (peers cap at
// 50 per scan); Findings is bounded and More counts the rest.
func TestNoCap(t *testing.T) {
	red := mustNew(t, Options{Mode: Flag, MaxFindings: 10})
	r := rand.New(rand.NewPCG(5, 6))
	var sb strings.Builder
	for i := range 5000 {
		sb.WriteString(plant(r, plantedKinds[i%len(plantedKinds)]).Text + "\n")
	}
	in := toolResult(sb.String())
	out, rep, err := red.JSON(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &in[0] {
		t.Error("flag mode copied the input")
	}
	if rep.Total != 5000 || len(rep.Findings) != 10 || rep.More != 4990 {
		t.Errorf("total %d, findings %d, more %d; want 5000, 10, 4990", rep.Total, len(rep.Findings), rep.More)
	}
}

// TestFlagPositions: in flag mode the bytes are kept and each finding's
// offsets hold its secret.
func TestFlagPositions(t *testing.T) {
	red := mustNew(t, Options{Mode: Flag})
	r := rand.New(rand.NewPCG(9, 9))
	var ps []planted
	var sb strings.Builder
	for _, k := range plantedKinds {
		p := plant(r, k)
		ps = append(ps, p)
		sb.WriteString("x " + p.Text + " y\n")
	}
	in := toolResult(sb.String())
	out, rep, err := red.JSON(nil, in)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("flag changed the bytes (err %v)", err)
	}
	if len(rep.Findings) != len(ps) {
		t.Fatalf("%d findings, want %d: %v", len(rep.Findings), len(ps), rep.Counts)
	}
	for i, f := range rep.Findings {
		var s string
		if err := json.Unmarshal([]byte(`"`+string(in[f.Start:f.End])+`"`), &s); err != nil {
			t.Fatalf("finding %d (%s) is not whole escapes: %q", i, f.Kind, in[f.Start:f.End])
		}
		if f.Kind != ps[i].Kind || s != ps[i].Secret && strings.TrimSpace(s) != ps[i].Secret {
			t.Errorf("finding %d: %s %q, want %s %q", i, f.Kind, s, ps[i].Kind, ps[i].Secret)
		}
	}
}

// TestFingerprint: the same secret has the same fingerprint wherever it
// is and however it is escaped; another key gives others.
func TestFingerprint(t *testing.T) {
	key := []byte("k1")
	a, b := mustNew(t, Options{Key: key}), mustNew(t, Options{Key: key, Mode: Flag})
	other := mustNew(t, Options{Key: []byte("k2")})
	const s = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"
	fps := func(r *Redactor, raw string) []string {
		_, rep, err := r.JSON(nil, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range rep.Findings {
			out = append(out, f.Fingerprint)
		}
		return out
	}
	x := fps(a, `{"a":"`+s+`","b":"x `+s+`"}`)
	y := fps(b, `{"c":"ghp_\u0061B3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"}`)
	z := fps(other, `{"a":"`+s+`"}`)
	w := fps(a, `{"a":"ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG6"}`)
	if len(x) != 2 || x[0] != x[1] || len(y) != 1 || y[0] != x[0] {
		t.Errorf("same secret, fingerprints %v and %v", x, y)
	}
	if len(z) != 1 || z[0] == x[0] {
		t.Errorf("another key gave the same fingerprint %v", z)
	}
	if len(w) != 1 || w[0] == x[0] {
		t.Errorf("another secret gave the same fingerprint %v (possible, 1 in 65536: change it)", w)
	}
}

// TestIdempotent: masked text scanned again is unchanged (a pad note
// quoting a masked result keeps its masks).
func TestIdempotent(t *testing.T) {
	red := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(1, 1))
	var sb strings.Builder
	for _, k := range plantedKinds {
		sb.WriteString(plant(r, k).Text + "\n")
	}
	once, _, _ := red.JSON(nil, toolResult(sb.String()))
	twice, rep, _ := red.JSON(nil, once)
	if !bytes.Equal(once, twice) || rep.Total != 0 {
		t.Errorf("second scan found %v", rep.Counts)
	}
}

// TestText: plain text (a pad write) is masked with no JSON decoding.
func TestText(t *testing.T) {
	red := mustNew(t, Options{})
	in := "note: the key is ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5 \"quoted\" \\ back"
	out, rep, err := red.String(in)
	if err != nil || rep.Counts["github-pat"] != 1 || strings.Contains(out, "ghp_") || !strings.HasSuffix(out, `"quoted" \ back`) {
		t.Errorf("String(%q) = %q, %v, %v", in, out, rep.Counts, err)
	}
	clean := "nothing to see"
	if out, rep, _ := red.String(clean); out != clean || rep.Total != 0 {
		t.Errorf("clean text changed: %q", out)
	}
}

// TestModes: off passes the bytes unscanned; With shares the rules.
func TestModes(t *testing.T) {
	red := mustNew(t, Options{})
	in := toolResult("ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5")
	for _, tc := range []struct {
		m       Mode
		changed bool
		total   int
	}{{Mask, true, 1}, {Flag, false, 1}, {Off, false, 0}} {
		out, rep, err := red.With(tc.m).JSON(nil, in)
		if err != nil || bytes.Equal(out, in) == tc.changed || rep.Total != tc.total {
			t.Errorf("%s: changed %v, total %d, err %v", tc.m, !bytes.Equal(out, in), rep.Total, err)
		}
	}
	if _, err := New(Options{Mode: "redact"}); err == nil {
		t.Error("mode \"redact\" accepted")
	}
}

// TestCleanAllocs: clean text is returned as is, with no allocation.
func TestCleanAllocs(t *testing.T) {
	if raceOn {
		t.Skip("allocations are not counted under the race detector")
	}
	red := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(2, 2))
	in := toolResult(strings.Join(logLines(r, 200), "\n"))
	var out []byte
	allocs := testing.AllocsPerRun(50, func() { out, _, _ = red.JSON(nil, in) })
	if allocs != 0 || &out[0] != &in[0] {
		t.Errorf("%v allocations (want 0), same slice %v", allocs, &out[0] == &in[0])
	}
}

// TestExtraAndAllow: configured patterns, with keywords, with a literal
// prefix, with none; allow-patterns keep what they match.
func TestExtraAndAllow(t *testing.T) {
	red := mustNew(t, Options{
		Extra: []Pattern{
			{ID: "acme-key", Regex: `ACME-[0-9A-F]{16}`},                                            // literal prefix as keyword
			{ID: "ticket-secret", Regex: `secret ticket ([a-z]{12})`, Keywords: []string{"ticket"}}, // group 1
			{ID: "card", Regex: `\b4[0-9]{15}\b`},                                                   // no keyword
		},
		Allow: []string{`^ghp_0{36}$`},
	})
	text := "k ACME-0123456789ABCDEF; the secret ticket abcdefghijkl; card 4111111111111111; placeholder ghp_" + strings.Repeat("0", 36)
	in := toolResult(text)
	out, rep, err := red.JSON(nil, append(in, ' '))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := resultText(out)
	want := map[string]int{"acme-key": 1, "ticket-secret": 1, "card": 1}
	if fmt.Sprint(rep.Counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v:\n%s", rep.Counts, want, got)
	}
	if !strings.Contains(got, "the secret ticket [REDACTED:ticket-secret:") || !strings.Contains(got, "ghp_000") {
		t.Errorf("output %s", got)
	}
	// A keyword-less pattern's match near a chunk's end is seen by two
	// windows and counted once, in both modes.
	for _, m := range []Mode{Mask, Flag} {
		big := toolResult(strings.Repeat("x", chunk-500) + " 4111111111111111 " + strings.Repeat("y", 3*chunk))
		if _, rep, _ := red.With(m).JSON(nil, big); rep.Total != 1 {
			t.Errorf("%s: %d cards across a chunk boundary, want 1", m, rep.Total)
		}
	}
	// A keyword-less pattern never masks outside a string.
	out, rep, _ = red.JSON(nil, []byte(`{"n":4111111111111111,"s":"4111111111111111"}`))
	if !json.Valid(out) || rep.Total != 1 {
		t.Errorf("number masked: %s (%v)", out, rep.Counts)
	}
}

// TestBadPatterns: a pattern that does not compile, matches the empty
// string or has a bad id is refused, naming it.
func TestBadPatterns(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Extra: []Pattern{{ID: "x", Regex: `ab(c`}}}, `extra pattern "x" (ab(c): invalid redaction pattern: missing closing ): ab(c`},
		{Options{Extra: []Pattern{{ID: "x", Regex: `a*`}}}, `extra pattern "x" (a*): invalid redaction pattern: it matches the empty string`},
		{Options{Extra: []Pattern{{ID: "Bad Id", Regex: `abc`}}}, `extra pattern 0: invalid redaction pattern: id "Bad Id"`},
		{Options{Extra: []Pattern{{ID: "x", Regex: `abc`, Keywords: []string{""}}}}, `an empty keyword`},
		{Options{Allow: []string{`[z-a]`}}, `allow pattern "[z-a]": invalid redaction pattern: invalid character class range: z-a`},
	} {
		_, err := New(tc.o)
		if err == nil || !errors.Is(err, ErrPattern) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestUnscannable: oversized input is refused with a reason and
// returned unchanged; off mode does not look. Input that looks binary
// is scanned all the same (a credential beside a NUL byte is masked), the
// report saying what it looked like.
func TestUnscannable(t *testing.T) {
	red := mustNew(t, Options{MaxBytes: 1 << 20})
	big := make([]byte, 1<<20+1)
	out, _, err := red.Text(nil, big)
	var ue *UnscannableError
	if !errors.Is(err, ErrUnscannable) || !errors.As(err, &ue) || !strings.Contains(err.Error(), "over the scan bound") || !bytes.Equal(out, big) {
		t.Errorf("oversized: err %v", err)
	}
	if _, _, err := red.With(Off).Text(nil, big); err != nil {
		t.Errorf("oversized: off mode: %v", err)
	}
	pat := plant(rand.New(rand.NewPCG(9, 9)), "github-pat").Secret
	bad := bytes.Repeat([]byte("ab\xff\xfe"), 100)
	for _, tc := range []struct {
		name   string
		in     []byte
		binary string
	}{
		{"NUL", []byte("abc\x00def token " + pat + " \x00"), "binary: 2 NUL bytes"},
		{"invalid UTF-8", append(append(bad, " token "+pat+" "...), bad...), "bytes of invalid UTF-8 in"},
	} {
		out, rep, err := red.Text(nil, tc.in)
		if err != nil || !strings.Contains(rep.Binary, tc.binary) {
			t.Errorf("%s: err %v, binary %q, want %q", tc.name, err, rep.Binary, tc.binary)
		}
		if rep.Counts["github-pat"] != 1 || bytes.Contains(out, []byte(pat)) || !bytes.Contains(out, []byte("[REDACTED:github-pat:")) {
			t.Errorf("%s: the token beside binary bytes was not masked: %v %q", tc.name, rep.Counts, out)
		}
	}
	// Rare invalid bytes (a cut multi-byte character) are not binary.
	if _, rep, err := red.Text(nil, append(bytes.Repeat([]byte("a"), 5000), 0xe2)); err != nil || rep.Binary != "" {
		t.Errorf("one invalid byte in 5001: %v %q", err, rep.Binary)
	}
	// "blob" as a value, not a key, is scanned.
	if _, _, err := red.JSON(nil, []byte(`{"type":"blob","x":"\"blob\": no"}`)); err != nil {
		t.Errorf("blob as a value: %v", err)
	}
}

// TestBlobSkipped: a "blob" value (a binary resource's base64) is left as
// it is, even where it reads as a secret by chance, and counted as
// skipped; the text beside it, in the same result, is scanned and masked.
func TestBlobSkipped(t *testing.T) {
	red := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(9, 9))
	pat := plant(r, "github-pat")
	blob := "AAEC" + pat.Secret + "AAEC" // base64 that happens to hold the format
	in := []byte(`{"content":[{"type":"text","text":"` + pat.Text + `"},{"type":"resource","resource":{"uri":"a://b","blob" : "` + blob + `"}}]}`)
	out, rep, err := red.JSON(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 1 || rep.Counts["github-pat"] != 1 || rep.Skipped != len(blob)+2 {
		t.Errorf("report %+v, want one github-pat and %d bytes skipped", rep, len(blob)+2)
	}
	if !bytes.Contains(out, []byte(`"blob" : "`+blob+`"`)) {
		t.Errorf("the blob was altered: %s", out)
	}
	if bytes.Contains(out, []byte(`"text":"`+pat.Text)) || !bytes.Contains(out, []byte("[REDACTED:github-pat:")) {
		t.Errorf("the text beside the blob was not masked: %s", out)
	}
}

// TestOverlap: one secret matched by two rules (a JWT as a bearer token,
// a Slack bot token by its two rules) is one mask, of the kind earlier in
// the table, counted once.
func TestOverlap(t *testing.T) {
	red := mustNew(t, Options{})
	r := rand.New(rand.NewPCG(4, 4))
	jwt := plant(r, "jwt").Secret
	slack := plant(r, "slack-bot-token").Secret
	for _, tc := range []struct{ text, kind string }{
		{"Authorization: Bearer " + jwt, "jwt"},
		{"token " + slack, "slack-bot-token"},
	} {
		for range 20 { // the order of equal spans must not vary
			out, rep, _ := red.JSON(nil, toolResult(tc.text))
			text, _ := resultText(out)
			if rep.Total != 1 || rep.Counts[tc.kind] != 1 || len(masksByKind(text)) != 1 {
				t.Fatalf("%q: %v, %s", tc.text, rep.Counts, text)
			}
		}
	}
}

// TestAWSSecretContexts: the AWS secret is found in the spellings tools
// write it in.
func TestAWSSecretContexts(t *testing.T) {
	red := mustNew(t, Options{})
	const s = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKQ"
	for _, ctx := range []string{
		"aws_secret_access_key = %s", "AWS_SECRET_ACCESS_KEY=%s", `"SecretAccessKey": "%s"`,
		"aws_secret_key: %s", "AWS_SECRET_KEY='%s'", `awsSecretAccessKey: "%s"`, "export AWS_SECRET=%s",
	} {
		text := fmt.Sprintf(ctx, s)
		if _, rep, _ := red.JSON(nil, toolResult(text)); rep.Counts["aws-secret-access-key"] != 1 {
			t.Errorf("%q: %v", text, rep.Counts)
		}
	}
}
