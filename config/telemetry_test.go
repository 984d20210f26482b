package config

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestTelemetry(t *testing.T) {
	c, err := Parse("", []byte(""), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Telemetry{ExportTimeout: 10 * time.Second, QueueSize: 2048, AuditMaxBytes: 64 << 20}
	if !equalTelemetry(c.Telemetry, want) {
		t.Fatalf("defaults: %+v", c.Telemetry)
	}
	c, err = Parse("/etc/sp/cfg.toml", []byte(`[telemetry]
endpoint = "http://collector:4318"
protocol = "http/protobuf"
headers = { "x-api-key" = "{{ env.KEY }}" }
insecure = true
service_name = "sp-prod"
record_arguments = true
metrics_addr = "127.0.0.1:9464"
audit_log = "audit/calls.jsonl"
audit_max_bytes = "1MiB"
export_timeout = "3s"
queue_size = 64
`), testEnv(map[string]string{"KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	want = Telemetry{Endpoint: "http://collector:4318", Protocol: ProtocolHTTPProtobuf, Headers: map[string]string{"x-api-key": "k"},
		Insecure: true, ServiceName: "sp-prod", RecordArguments: true, MetricsAddr: "127.0.0.1:9464",
		AuditLog: "/etc/sp/audit/calls.jsonl", AuditMaxBytes: 1 << 20, ExportTimeout: 3 * time.Second, QueueSize: 64}
	if !equalTelemetry(c.Telemetry, want) {
		t.Fatalf("got %+v\nwant %+v", c.Telemetry, want)
	}
	c, err = Parse("", []byte("[telemetry]\naudit_log = \"stderr\"\n"), testEnv(nil))
	if err != nil || c.Telemetry.AuditLog != AuditStderr {
		t.Fatalf("audit_log stderr: %+v %v", c.Telemetry, err)
	}
}

func equalTelemetry(a, b Telemetry) bool {
	return maps.Equal(a.Headers, b.Headers) && fmt.Sprint(a) == fmt.Sprint(b)
}

// TestTelemetryErrors: every bad value is reported at its file:line:col
// with its key.
func TestTelemetryErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"[telemetry]\nendpont = \"http://x:4318\"\n", `cfg.toml:2:1: telemetry.endpont: unknown key "endpont" (did you mean "endpoint"?)`},
		{"[telemetry]\nendpoint = \"collector:4318\"\n", `cfg.toml:2:1: telemetry.endpoint: invalid OTLP endpoint "collector:4318"`},
		{"[telemetry]\nprotocol = \"http/json\"\n", `cfg.toml:2:1: telemetry.protocol: invalid value "http/json": want one of "http/protobuf"`},
		// gRPC was dropped (issue 53): the error says what to use instead.
		{"[telemetry]\nendpoint = \"http://localhost:4317\"\nprotocol = \"grpc\"\n", `cfg.toml:3:1: telemetry.protocol: "grpc" is no longer built in: use "http/protobuf" (every collector takes it, on port 4318: endpoint = "http://localhost:4318"), or leave protocol out`},
		{"[telemetry]\nmetrics_addr = \"9464\"\n", `cfg.toml:2:1: telemetry.metrics_addr: invalid address "9464": want host:port`},
		{"[telemetry]\nmetrics_addr = \"localhost:99999\"\n", `cfg.toml:2:1: telemetry.metrics_addr: invalid port "99999"`},
		{"[telemetry]\nrecord_arguments = \"no\"\n", `cfg.toml:2:1: telemetry.record_arguments: want true or false, got string`},
		{"[telemetry]\nqueue_size = 0\n", `cfg.toml:2:1: telemetry.queue_size: 0 out of range [1, 1048576]`},
		{"[telemetry]\nexport_timeout = \"1h\"\n", `cfg.toml:2:1: telemetry.export_timeout:`},
		{"[telemetry]\nheaders = { a = 1 }\n", `cfg.toml:2:13: telemetry.headers.a:`},
		{"[telemetry]\naudit_log = \"\"\n", `cfg.toml:2:1: telemetry.audit_log: must not be empty`},
		{"[telemetry]\naudit_max_bytes = \"lots\"\n", `cfg.toml:2:1: telemetry.audit_max_bytes: invalid size "lots"`},
		{"[telemetri]\n", `cfg.toml:1:2: telemetri: unknown key "telemetri" (did you mean "telemetry"?)`},
	} {
		_, err := Parse("cfg.toml", []byte(tc.src), testEnv(nil))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}
