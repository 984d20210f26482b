package config

import (
	"fmt"
	"net/url"
	"time"
)

// Telemetry is [telemetry]: traces and metrics over OTLP, Prometheus text
// on a separate listener, and the audit log (package telemetry). The zero
// value (no endpoint, no metrics_addr, no audit_log) turns everything off;
// the standard OTEL_EXPORTER_OTLP_* environment can still turn OTLP on.
type Telemetry struct {
	// Endpoint is the OTLP base URL ("endpoint", e.g.
	// "http://localhost:4318"): over http/protobuf traces go to
	// {Endpoint}/v1/traces and metrics to {Endpoint}/v1/metrics. ""
	// leaves it to OTEL_EXPORTER_OTLP_ENDPOINT (and the per-signal
	// variables).
	Endpoint string
	// Protocol is "http/protobuf" ("protocol"), the one built in; ""
	// leaves it to OTEL_EXPORTER_OTLP_PROTOCOL (and the per-signal
	// variables), then "http/protobuf". "grpc" is an error saying what to
	// use instead: gRPC was a third of the binary (issue 53).
	Protocol string
	// Headers are sent with every export ("headers"), e.g. an API key;
	// over OTEL_EXPORTER_OTLP_HEADERS.
	Headers map[string]string
	// Insecure allows a plain http:// endpoint that is not loopback
	// ("insecure"; default false).
	Insecure bool
	// ServiceName names the resource ("service_name"); "" leaves it to
	// OTEL_SERVICE_NAME, then "scratchpad-mcp".
	ServiceName string
	// RecordArguments puts tool arguments on spans ("record_arguments";
	// default false: argument values are never recorded otherwise).
	RecordArguments bool
	// MetricsAddr is host:port of the Prometheus text listener
	// ("metrics_addr"); "" serves no metrics endpoint. Never the MCP port.
	MetricsAddr string
	// AuditLog is where the audit lines go ("audit_log"): "stderr", or a
	// file path (relative to the config file's folder; appended to, mode
	// 0600); "" writes no audit log.
	AuditLog string
	// AuditMaxBytes rotates the audit log file past this size
	// ("audit_max_bytes"; default 64 MiB; 0: never): the file becomes
	// {AuditLog}.1 (replacing the one before) and a new file starts.
	AuditMaxBytes int64
	// ExportTimeout bounds one OTLP export ("export_timeout"; default
	// 10s).
	ExportTimeout time.Duration
	// QueueSize bounds the spans and audit lines waiting to be written
	// ("queue_size"; default 2048): past it they are dropped and counted,
	// never waited for.
	QueueSize int
}

// Telemetry defaults and values.
const (
	ProtocolHTTPProtobuf      = "http/protobuf"
	protocolGRPC              = "grpc" // no longer built in: an error naming what to use
	AuditStderr               = "stderr"
	DefaultTelemetryTimeout   = 10 * time.Second
	DefaultTelemetryQueueSize = 2048
	DefaultAuditMaxBytes      = 64 << 20
	maxTelemetryQueueSize     = 1 << 20
	maxTelemetryExportTimeout = 5 * time.Minute
)

func defaultTelemetry() Telemetry {
	return Telemetry{ExportTimeout: DefaultTelemetryTimeout, QueueSize: DefaultTelemetryQueueSize, AuditMaxBytes: DefaultAuditMaxBytes}
}

func (d *decoder) telemetry(p keyPath, v any, t *Telemetry) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "endpoint", "protocol", "headers", "insecure", "service_name", "record_arguments", "metrics_addr", "audit_log", "audit_max_bytes", "export_timeout", "queue_size")
	if v, ok := m["endpoint"]; ok {
		if s, ok := d.nonEmpty(p.key("endpoint"), v); ok {
			if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.fail(p.key("endpoint"), "invalid OTLP endpoint %q: want http(s)://host:port, e.g. \"http://localhost:4318\"", s)
			} else {
				t.Endpoint = s
			}
		}
	}
	if v, ok := m["protocol"]; ok {
		if s, ok := v.(string); ok && s == protocolGRPC {
			d.fail(p.key("protocol"), "%q is no longer built in: use %q (every collector takes it, on port 4318: endpoint = \"http://localhost:4318\"), or leave protocol out", s, ProtocolHTTPProtobuf)
		} else {
			t.Protocol, _ = d.oneOf(p.key("protocol"), v, ProtocolHTTPProtobuf)
		}
	}
	if v, ok := m["headers"]; ok {
		t.Headers, _ = d.strMap(p.key("headers"), v, func(k string) string {
			if k == "" {
				return "empty header name"
			}
			return ""
		})
	}
	if v, ok := m["insecure"]; ok {
		t.Insecure, _ = d.boolean(p.key("insecure"), v)
	}
	if v, ok := m["service_name"]; ok {
		t.ServiceName, _ = d.nonEmpty(p.key("service_name"), v)
	}
	if v, ok := m["record_arguments"]; ok {
		t.RecordArguments, _ = d.boolean(p.key("record_arguments"), v)
	}
	if v, ok := m["metrics_addr"]; ok {
		if s, ok := d.nonEmpty(p.key("metrics_addr"), v); ok {
			if msg := validAddr(s); msg != "" {
				d.fail(p.key("metrics_addr"), "%s", msg)
			} else {
				t.MetricsAddr = s
			}
		}
	}
	if v, ok := m["audit_log"]; ok {
		if s, ok := v.(string); ok && s == AuditStderr {
			t.AuditLog = AuditStderr
		} else if path, ok := d.path(p.key("audit_log"), v); ok {
			t.AuditLog = path
		}
	}
	if v, ok := m["audit_max_bytes"]; ok {
		if x, ok := d.size(p.key("audit_max_bytes"), v); ok {
			t.AuditMaxBytes = x
		}
	}
	if v, ok := m["export_timeout"]; ok {
		if x, ok := d.durationUpTo(p.key("export_timeout"), v, false, maxTelemetryExportTimeout); ok {
			t.ExportTimeout = x
		}
	}
	if v, ok := m["queue_size"]; ok {
		if n, ok := d.integer(p.key("queue_size"), v, 1, maxTelemetryQueueSize); ok {
			t.QueueSize = n
		}
	}
}

// MetricsAddrError is the error of a metrics_addr that cannot be listened
// on, which serve logs as a warning before serving on without metrics: it
// names the key, since the cause (net's) names only the address.
func MetricsAddrError(file string, err error) error {
	if file == "" {
		file = "config"
	}
	return fmt.Errorf("%s: [telemetry] metrics_addr: %w", file, err)
}
