package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxBinaryBytes is issue 53's bound on the stripped linux/amd64 binary
// (docs/performance.md, "Binary size", says what each dependency costs).
const maxBinaryBytes = 25 << 20

// TestBinarySize: the stripped linux/amd64 binary, built as make build
// builds it, stays within 25 MiB.
func TestBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary once more")
	}
	bin := filepath.Join(t.TempDir(), "scratchpad-mcp")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stripped linux/amd64 binary: %d bytes (%.2f MiB)", st.Size(), float64(st.Size())/(1<<20))
	if st.Size() > maxBinaryBytes {
		t.Errorf("the stripped binary is %.2f MiB, over %d MiB: see docs/performance.md, \"Binary size\", for what each dependency costs",
			float64(st.Size())/(1<<20), maxBinaryBytes>>20)
	}
}

// bannedDeps are packages the binary must not link, each with why: what
// brought the binary to 41.6 MB (issue 53).
var bannedDeps = map[string]string{
	"google.golang.org/grpc":               "gRPC (OTLP over gRPC is not built in: telemetry posts OTLP/HTTP)",
	"go.opentelemetry.io/otel/exporters":   "the OpenTelemetry exporters pull in gRPC through the collector packages (telemetry has its own)",
	"go.opentelemetry.io/proto/otlp":       "the generated OTLP types and the protobuf runtime, 1.7 MB (telemetry writes protobuf by hand)",
	"google.golang.org/protobuf/proto":     "the protobuf runtime (protowire alone is what telemetry needs)",
	"text/template":                        "its reflect Method calls stop the linker pruning unused methods: one reachable Execute adds 8.7 MB (go-redis keeps its 630 methods)",
	"html/template":                        "as text/template",
	"github.com/pkoukk/tiktoken-go-loader": "embeds four base64 vocabularies, 6.8 MB (tokens embeds its own compact two)",
}

// TestBinaryDeps: none of bannedDeps is among the binary's packages.
func TestBinaryDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for banned, why := range bannedDeps {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("the binary links %s: %s", pkg, why)
			}
		}
	}
}
