package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// The planted corpus: secrets of every default kind, made up (random, in
// each provider's format), and look-alikes that must be kept.

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b64    = alnum + "+/"
	hexd   = "0123456789abcdef"
	digits = "0123456789"
)

// The planted secrets come from internal/testsecrets (the end-to-end
// tests plant the same).
type planted = testsecrets.Planted

func plant(r *rand.Rand, kind string) planted { return testsecrets.Plant(r, kind) }

var plantedKinds = testsecrets.Kinds

func randStr(r *rand.Rand, set string, n int) string { return testsecrets.RandString(r, set, n) }

// toolResult is a tools/call result with text as its one text block, as
// an MCP server encodes it (encoding/json: \n, \u003c, \" escapes).
func toolResult(text string) []byte {
	b, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}})
	return b
}

// resultText is the text of a tools/call result.
func resultText(b []byte) (string, error) {
	var v struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range v.Content {
		sb.WriteString(c.Text)
	}
	return sb.String(), nil
}

// logLines is a realistic service log of n lines.
func logLines(r *rand.Rand, n int) []string {
	levels := []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}
	msgs := []string{
		"GET /api/v1/orders/%d 200 %dms",
		"connected to upstream %s:%d",
		"cache miss for key user:%d:profile",
		"processed batch id=%s size=%d",
		"retrying request to https://api.example.com/v2/items?page=%d (attempt %d)",
		"commit %s deployed by ci (build %d)",
		"trace_id=%s span=%d duration_ms=12",
		"pulled image registry.example.com/app@sha256:%s in %dms",
	}
	out := make([]string, n)
	for i := range out {
		m := msgs[r.IntN(len(msgs))]
		var msg string
		switch strings.Count(m, "%") {
		default:
			a1 := randStr(r, hexd, 40)
			if strings.Contains(m, "trace") {
				a1 = uuid(r)
			}
			if strings.Contains(m, "%s:%d") {
				msg = fmt.Sprintf(m, "10.0."+fmt.Sprint(r.IntN(255))+"."+fmt.Sprint(r.IntN(255)), 5432)
			} else if strings.HasPrefix(m, "GET") || strings.HasPrefix(m, "retrying") {
				msg = fmt.Sprintf(m, r.IntN(99999), r.IntN(500))
			} else if strings.Contains(m, "sha256") {
				msg = fmt.Sprintf(m, randStr(r, hexd, 64), r.IntN(900))
			} else {
				msg = fmt.Sprintf(m, a1, r.IntN(1000))
			}
		case 1:
			msg = fmt.Sprintf(m, r.IntN(99999))
		}
		out[i] = fmt.Sprintf("2026-12-02T07:%02d:%02d.%03dZ %-5s [%s] %s", i/60%60, i%60, r.IntN(1000), levels[r.IntN(len(levels))], []string{"api", "worker", "db", "auth"}[r.IntN(4)], msg)
	}
	return out
}

func uuid(r *rand.Rand) string {
	h := randStr(r, hexd, 32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// k8sListing is a kubectl get pods -o json of n pods (JSON text, as a
// Kubernetes MCP server returns inside its text block).
func k8sListing(r *rand.Rand, n int) string {
	items := make([]map[string]any, n)
	for i := range items {
		name := fmt.Sprintf("web-%s-%s", randStr(r, "abcdefghijklmnopqrstuvwxyz0123456789", 10), randStr(r, "abcdefghijklmnopqrstuvwxyz0123456789", 5))
		items[i] = map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{
				"name": name, "namespace": "production", "uid": uuid(r),
				"resourceVersion": fmt.Sprint(r.IntN(1e8)), "creationTimestamp": "2026-11-30T10:12:44Z",
				"labels":      map[string]string{"app": "web", "pod-template-hash": randStr(r, "abcdefghijklmnopqrstuvwxyz0123456789", 10), "tier": "frontend"},
				"annotations": map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-29T08:00:00Z", "checksum/config": randStr(r, hexd, 64)},
			},
			"spec": map[string]any{
				"containers": []map[string]any{{
					"name": "web", "image": "registry.example.com/web:1.24.3",
					"ports":     []map[string]any{{"containerPort": 8080, "protocol": "TCP"}},
					"resources": map[string]any{"limits": map[string]string{"cpu": "500m", "memory": "512Mi"}, "requests": map[string]string{"cpu": "100m", "memory": "128Mi"}},
					"env":       []map[string]string{{"name": "LOG_LEVEL", "value": "info"}, {"name": "REGION", "value": "eu-west-1"}},
				}},
				"nodeName": fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", r.IntN(255), r.IntN(255)),
			},
			"status": map[string]any{
				"phase": "Running", "podIP": fmt.Sprintf("10.0.%d.%d", r.IntN(255), r.IntN(255)),
				"containerStatuses": []map[string]any{{"name": "web", "ready": true, "restartCount": r.IntN(3),
					"imageID":     "registry.example.com/web@sha256:" + randStr(r, hexd, 64),
					"containerID": "containerd://" + randStr(r, hexd, 64)}},
			},
		}
	}
	b, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	return string(b)
}

// lookAlikes are strings that look like secrets and are not: commit ids,
// UUIDs, image digests, npm integrity strings, base64 image data.
func lookAlikes(r *rand.Rand, n int) []string {
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		switch i % 7 {
		case 0:
			out = append(out, randStr(r, hexd, 40)) // commit id
		case 1:
			out = append(out, uuid(r))
		case 2:
			out = append(out, "sha256:"+randStr(r, hexd, 64))
		case 3:
			raw := make([]byte, 64)
			for j := range raw {
				raw[j] = byte(r.IntN(256))
			}
			out = append(out, "sha512-"+base64.StdEncoding.EncodeToString(raw))
		case 4:
			raw := make([]byte, 3000)
			for j := range raw {
				raw[j] = byte(r.IntN(256))
			}
			out = append(out, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(raw))
		case 5:
			out = append(out, "git checkout "+randStr(r, hexd, 12)+" && docker pull ghcr.io/org/app@sha256:"+randStr(r, hexd, 64))
		case 6:
			// Base64 that is not a JWT but starts like one (eyJ = `{"`).
			out = append(out, base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(`{"id":%d,"kind":"%s"}`, r.IntN(1e6), randStr(r, alnum, 30)))))
		}
	}
	return out
}
