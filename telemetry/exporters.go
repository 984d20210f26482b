package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// protocol is the OTLP protocol of a signal ("TRACES", "METRICS"): the
// section's, else OTEL_EXPORTER_OTLP_{SIGNAL}_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf.
func protocol(cfg config.Telemetry, env func(string) string, signal string) (string, error) {
	if cfg.Protocol != "" {
		return cfg.Protocol, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch v := env(k); v {
		case "":
			continue
		case config.ProtocolHTTPProtobuf, config.ProtocolGRPC:
			return v, nil
		default:
			return "", fmt.Errorf("%w: %s=%q: want %q or %q", ErrProtocol, k, v, config.ProtocolHTTPProtobuf, config.ProtocolGRPC)
		}
	}
	return config.ProtocolHTTPProtobuf, nil
}

// endpointURL is the URL a signal is sent to: the section's endpoint,
// else OTEL_EXPORTER_OTLP_{SIGNAL}_ENDPOINT as is, else
// OTEL_EXPORTER_OTLP_ENDPOINT (plus the signal's path over HTTP), as the
// OTLP exporter specification says. Resolved here, not left to the
// exporter, so that Options.LookupEnv is the one environment read for it.
func endpointURL(cfg config.Telemetry, env func(string) string, proto, signal, path string) string {
	if proto == config.ProtocolGRPC {
		path = ""
	}
	if cfg.Endpoint != "" {
		return strings.TrimRight(cfg.Endpoint, "/") + path
	}
	if u := env("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); u != "" {
		return u
	}
	if u := env("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return strings.TrimRight(u, "/") + path
	}
	return ""
}

// newSpanExporter: what the section says wins over the environment, which
// the exporter reads itself for the rest (OTEL_EXPORTER_OTLP_HEADERS,
// certificates). Retries are off: the queue, not the exporter, absorbs an
// endpoint that is down. Neither exporter dials here.
func newSpanExporter(ctx context.Context, cfg config.Telemetry, env func(string) string) (sdktrace.SpanExporter, error) {
	proto, err := protocol(cfg, env, "TRACES")
	if err != nil {
		return nil, err
	}
	endpoint := endpointURL(cfg, env, proto, "TRACES", "/v1/traces")
	var exp sdktrace.SpanExporter
	if proto == config.ProtocolGRPC {
		o := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(cfg.ExportTimeout), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if endpoint != "" {
			o = append(o, otlptracegrpc.WithEndpointURL(endpoint))
		}
		if len(cfg.Headers) > 0 {
			o = append(o, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		exp, err = otlptracegrpc.New(ctx, o...)
	} else {
		o := []otlptracehttp.Option{otlptracehttp.WithTimeout(cfg.ExportTimeout), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
		if endpoint != "" {
			o = append(o, otlptracehttp.WithEndpointURL(endpoint))
		}
		if len(cfg.Headers) > 0 {
			o = append(o, otlptracehttp.WithHeaders(cfg.Headers))
		}
		exp, err = otlptracehttp.New(ctx, o...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: traces over %s: %w", proto, err)
	}
	return exp, nil
}

// newMetricExporter is [newSpanExporter] for metrics.
func newMetricExporter(ctx context.Context, cfg config.Telemetry, env func(string) string) (sdkmetric.Exporter, error) {
	proto, err := protocol(cfg, env, "METRICS")
	if err != nil {
		return nil, err
	}
	endpoint := endpointURL(cfg, env, proto, "METRICS", "/v1/metrics")
	var exp sdkmetric.Exporter
	if proto == config.ProtocolGRPC {
		o := []otlpmetricgrpc.Option{otlpmetricgrpc.WithTimeout(cfg.ExportTimeout), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false})}
		if endpoint != "" {
			o = append(o, otlpmetricgrpc.WithEndpointURL(endpoint))
		}
		if len(cfg.Headers) > 0 {
			o = append(o, otlpmetricgrpc.WithHeaders(cfg.Headers))
		}
		exp, err = otlpmetricgrpc.New(ctx, o...)
	} else {
		o := []otlpmetrichttp.Option{otlpmetrichttp.WithTimeout(cfg.ExportTimeout), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false})}
		if endpoint != "" {
			o = append(o, otlpmetrichttp.WithEndpointURL(endpoint))
		}
		if len(cfg.Headers) > 0 {
			o = append(o, otlpmetrichttp.WithHeaders(cfg.Headers))
		}
		exp, err = otlpmetrichttp.New(ctx, o...)
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: metrics over %s: %w", proto, err)
	}
	return exp, nil
}
