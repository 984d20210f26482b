package telemetry

import (
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// protocolGRPC is the OTLP protocol that is no longer built in: the value
// gets an error saying what to use instead.
const protocolGRPC = "grpc"

// protocol is the OTLP protocol of a signal ("TRACES", "METRICS"): the
// section's, else OTEL_EXPORTER_OTLP_{SIGNAL}_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf, the one built in.
func protocol(cfg config.Telemetry, env func(string) string, signal string) (string, error) {
	if cfg.Protocol != "" {
		return cfg.Protocol, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch v := env(k); v {
		case "":
			continue
		case config.ProtocolHTTPProtobuf:
			return v, nil
		case protocolGRPC:
			return "", fmt.Errorf("%w: %s=%q: OTLP over gRPC is no longer built in; use %q (every collector takes it, on port 4318: e.g. OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318), or unset %s",
				ErrProtocol, k, v, config.ProtocolHTTPProtobuf, k)
		default:
			return "", fmt.Errorf("%w: %s=%q: want %q", ErrProtocol, k, v, config.ProtocolHTTPProtobuf)
		}
	}
	return config.ProtocolHTTPProtobuf, nil
}

// endpointURL is the URL a signal is sent to: the section's endpoint plus
// the signal's path, else OTEL_EXPORTER_OTLP_{SIGNAL}_ENDPOINT as is, else
// OTEL_EXPORTER_OTLP_ENDPOINT plus the signal's path, as the OTLP exporter
// specification says. Resolved here, so that Options.LookupEnv is the one
// environment read.
func endpointURL(cfg config.Telemetry, env func(string) string, signal, path string) string {
	if cfg.Endpoint != "" {
		return trimSlash(cfg.Endpoint) + path
	}
	if u := env("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); u != "" {
		return u
	}
	if u := env("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return trimSlash(u) + path
	}
	return ""
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// newSpanExporter: spans over OTLP/HTTP protobuf to the endpoint's
// /v1/traces. It does not dial here.
func newSpanExporter(cfg config.Telemetry, env func(string) string, version string) (*spanExporter, error) {
	c, err := newClient(cfg, env, "TRACES", "/v1/traces", version)
	if err != nil {
		return nil, err
	}
	return &spanExporter{c: c}, nil
}

// newMetricExporter is [newSpanExporter] for metrics (/v1/metrics).
func newMetricExporter(cfg config.Telemetry, env func(string) string, version string) (*metricExporter, error) {
	c, err := newClient(cfg, env, "METRICS", "/v1/metrics", version)
	if err != nil {
		return nil, err
	}
	t, a := newMetricSelectors(env)
	return &metricExporter{c: c, temporality: t, aggregation: a}, nil
}

func newClient(cfg config.Telemetry, env func(string) string, signal, path, version string) (*otlpClient, error) {
	if _, err := protocol(cfg, env, signal); err != nil {
		return nil, err
	}
	return newOTLPClient(cfgView{headers: cfg.Headers, timeout: cfg.ExportTimeout}, env, signal, endpointURL(cfg, env, signal, path), version)
}
