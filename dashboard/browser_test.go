package dashboard

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// skipOrFail skips when a peer program is missing, but fails under
// CI=true: CI must run every test (the rule of e2e's skipOrFail).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf(format+" (CI=true: a missing peer fails the run instead of skipping it)", args...)
	}
	t.Skipf(format, args...)
}

// chromiumPath is headless Chromium (Debian package chromium,
// scripts/deps.sh).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	skipOrFail(t, "chromium is not installed (Debian package chromium; scripts/deps.sh installs it)")
	return ""
}

// chromium runs headless Chromium on url with extra flags and returns
// its stdout. Virtual time lets the page's script run to its end before
// the DOM is dumped or the screenshot taken; the profile is a fresh
// folder, and nothing reaches the network but the test server.
func chromium(t *testing.T, url string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--window-size=1200,900", "--force-device-scale-factor=1", "--hide-scrollbars",
		"--virtual-time-budget=3000"}, extra...)
	cmd := exec.CommandContext(ctx, chromiumPath(t), append(args, url)...)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return out
}

var rectAttr = regexp.MustCompile(`<canvas id="(\w+)"[^>]*data-rect="(\d+),(\d+),(\d+),(\d+)"[^>]*data-drawn="(\d+)"`)

// plot is where the page says a canvas is and how much it drew.
type plot struct {
	rect  image.Rectangle
	drawn int
}

func plots(t *testing.T, dom string) map[string]plot {
	t.Helper()
	out := map[string]plot{}
	for _, m := range rectAttr.FindAllStringSubmatch(dom, -1) {
		n := make([]int, 5)
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+2])
		}
		out[m[1]] = plot{rect: image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3]), drawn: n[4]}
	}
	return out
}

func hex(s string) color.RGBA {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 255}
}

// count is how many pixels of img inside r are within a small distance
// of c (canvas antialiasing shades the edges of lines).
func count(img image.Image, r image.Rectangle, c color.RGBA) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			R, G, B, _ := img.At(x, y).RGBA()
			d := abs(int(R>>8)-int(c.R)) + abs(int(G>>8)-int(c.G)) + abs(int(B>>8)-int(c.B))
			if d <= 12 {
				n++
			}
		}
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// TestDashboardInChromium loads the page in headless Chromium, once with
// a morning of calls and once with none: the DOM tells where each plot
// is and how much it drew, and the screenshot, decoded here, must hold
// the plot colours inside those areas (the two series' lines and legend,
// the tools' bars, a green and a red budget bar) with data, and none of
// them without.
func TestDashboardInChromium(t *testing.T) {
	chromiumPath(t)
	now := t0.Add(25 * time.Minute)
	blue, orange, green, red := hex("#1f77b4"), hex("#ff7f0e"), hex("#2ca02c"), hex("#d62728")
	for _, tc := range []struct {
		name  string
		calls []telemetry.Record
		drawn map[string]int
		want  map[string][]color.RGBA // per plot: colours that must be there
		not   map[string][]color.RGBA // and must not
	}{
		{"calls", sample(), map[string]int{"kept": 2, "tools": 5, "budgets": 2},
			map[string][]color.RGBA{"kept": {blue, orange}, "tools": {blue, orange}, "budgets": {green, red}}, nil},
		{"none", nil, map[string]int{"kept": 0, "tools": 0, "budgets": 0},
			nil, map[string][]color.RGBA{"kept": {blue, orange}, "tools": {blue, orange}, "budgets": {green, red}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(Options{Calls: byOwner(tc.calls), Now: func() time.Time { return now }}))
			defer srv.Close()
			url := srv.URL + "/dashboard"
			dom := string(chromium(t, url, "--dump-dom"))
			if !strings.Contains(dom, `data-rendered="`) {
				t.Fatalf("the script did not render:\n%.2000s", dom)
			}
			ps := plots(t, dom)
			for id, n := range tc.drawn {
				if ps[id].drawn != n || ps[id].rect.Empty() {
					t.Errorf("%s: drew %d in %v, want %d", id, ps[id].drawn, ps[id].rect, n)
				}
			}
			if tc.name == "calls" && (!strings.Contains(dom, "scratchpad/search-19.json") || !strings.Contains(dom, "tool_error")) {
				t.Error("the tables lack the biggest output or the recent calls")
			}
			if tc.name == "calls" && !strings.Contains(dom, "100k more handed to tools by reference") {
				t.Error("the summary does not say what was handed over by reference")
			}
			shot := filepath.Join(t.TempDir(), "dashboard.png")
			chromium(t, url, "--screenshot="+shot)
			f, err := os.Open(shot)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 900 {
				t.Fatalf("screenshot %v", b)
			}
			for id, cs := range tc.want {
				for _, c := range cs {
					if n := count(img, ps[id].rect, c); n < 60 {
						t.Errorf("%s: %d pixels of %v, want a plot's worth", id, n, c)
					}
				}
			}
			for id, cs := range tc.not {
				for _, c := range cs {
					if n := count(img, ps[id].rect, c); n > 0 {
						t.Errorf("%s: %d pixels of %v with nothing to plot", id, n, c)
					}
				}
			}
			if t.Failed() || os.Getenv("DASHBOARD_SHOT") != "" {
				keep := filepath.Join(os.TempDir(), fmt.Sprintf("dashboard-%s.png", tc.name))
				if b, err := os.ReadFile(shot); err == nil && os.WriteFile(keep, b, 0o644) == nil {
					t.Logf("screenshot kept at %s", keep)
				}
			}
		})
	}
}
