package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// Sentinel errors of [Open].
var (
	// ErrProtocol: the environment's OTLP protocol is not the one built
	// in, http/protobuf (grpc was, until it cost a third of the binary;
	// http/json never was).
	ErrProtocol = errors.New("telemetry: OTLP protocol not supported")
	// ErrInsecureEndpoint: a plain http:// endpoint that is not loopback,
	// without [telemetry] insecure = true.
	ErrInsecureEndpoint = errors.New("telemetry: plain http endpoint off loopback")
)

// Options are what [Open] takes besides the [telemetry] section.
type Options struct {
	// Version is the service.version resource attribute.
	Version string
	// LookupEnv reads the environment (nil: [os.LookupEnv]); tests pass
	// their own so that the OTEL_* variables of the machine do not leak in.
	LookupEnv func(string) (string, bool)
	// Stderr is where audit_log = "stderr" writes (nil: [os.Stderr]).
	Stderr interface{ Write([]byte) (int, error) }
	// FlushInterval is how often queued spans are exported (0: 1s).
	FlushInterval time.Duration
	// MetricInterval is how often metrics are pushed over OTLP (0: 30s).
	MetricInterval time.Duration
}

// Provider is the process's telemetry: a tracer, the instruments, the
// Prometheus reader and the audit log, each present only when configured.
// A nil *Provider is valid and turns every method into a no-op: that is
// what "telemetry off" is, at the cost of one nil check per call.
type Provider struct {
	cfg    config.Telemetry
	tracer trace.Tracer // nil: no traces
	tp     *sdktrace.TracerProvider
	queue  *spanQueue
	mp     *sdkmetric.MeterProvider
	prom   *sdkmetric.ManualReader // nil: no metrics_addr
	m      *instruments            // nil: no metrics at all
	audit  *auditLog               // nil: no audit log
	recent *recent
	propag propagation.TextMapPropagator
}

// Open builds the provider that cfg and the OTEL_* environment ask for:
// traces and metrics over OTLP/HTTP (protobuf) when an endpoint is configured
// (cfg.Endpoint, else OTEL_EXPORTER_OTLP_ENDPOINT or the per-signal
// variables), the Prometheus reader when cfg.MetricsAddr is set, the audit
// log when cfg.AuditLog is. It returns nil, nil when nothing is: callers
// keep the nil and every call is a no-op. Nothing here dials: an
// unreachable endpoint shows only as dropped spans later.
func Open(ctx context.Context, cfg config.Telemetry, opts Options) (*Provider, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	// OTEL_SDK_DISABLED turns traces and metrics off; the audit log is
	// not OpenTelemetry's and stays.
	disabled := strings.EqualFold(env("OTEL_SDK_DISABLED"), "true")
	if disabled {
		cfg.MetricsAddr = ""
	}
	traces := !disabled && signalOn(cfg, env, "TRACES")
	otlpMetrics := !disabled && signalOn(cfg, env, "METRICS")
	if !traces && !otlpMetrics && cfg.MetricsAddr == "" && cfg.AuditLog == "" {
		// Nothing exported or written: the recent calls are still kept
		// for the dashboard, which needs no [telemetry] at all.
		return &Provider{cfg: cfg, recent: newRecent(recentCalls), propag: propagation.TraceContext{}}, nil
	}
	if cfg.Endpoint != "" && !cfg.Insecure && !loopbackOrTLS(cfg.Endpoint) {
		return nil, fmt.Errorf("%w: [telemetry] endpoint %q sends spans in the clear: use https, or set [telemetry] insecure = true", ErrInsecureEndpoint, cfg.Endpoint)
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = config.DefaultTelemetryQueueSize
	}
	if cfg.ExportTimeout <= 0 {
		cfg.ExportTimeout = config.DefaultTelemetryTimeout
	}
	p := &Provider{cfg: cfg, recent: newRecent(recentCalls), propag: propagation.TraceContext{}}
	// fail stops what was started before the error: no exporter or
	// writer goroutine outlives a failed Open.
	fail := func(err error) (*Provider, error) {
		_ = p.Close(context.Background())
		return nil, err
	}
	res, err := newResource(ctx, cfg, env, opts.Version)
	if err != nil {
		return nil, err
	}
	// First the audit log, then the exporters: a PeriodicReader runs
	// from its creation, so it is made just before the MeterProvider
	// that Close stops.
	if cfg.AuditLog != "" {
		if p.audit, err = openAudit(cfg.AuditLog, cfg.QueueSize, cfg.AuditMaxBytes, opts.Stderr); err != nil {
			return fail(err)
		}
	}
	if traces {
		exp, err := newSpanExporter(cfg, env, opts.Version)
		if err != nil {
			return fail(err)
		}
		p.queue = newSpanQueue(exp, cfg.QueueSize, cfg.ExportTimeout, opts.FlushInterval)
		p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(p.queue))
		p.tracer = p.tp.Tracer(scopeName, trace.WithInstrumentationVersion(opts.Version), trace.WithSchemaURL(semconv.SchemaURL))
	}
	var readers []sdkmetric.Option
	if cfg.MetricsAddr != "" {
		p.prom = sdkmetric.NewManualReader()
		readers = append(readers, sdkmetric.WithReader(p.prom))
	}
	if otlpMetrics {
		exp, err := newMetricExporter(cfg, env, opts.Version)
		if err != nil {
			return fail(err)
		}
		interval := opts.MetricInterval
		if interval <= 0 {
			interval = 30 * time.Second
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp,
			sdkmetric.WithInterval(interval), sdkmetric.WithTimeout(cfg.ExportTimeout))))
	}
	if len(readers) > 0 {
		p.mp = sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		if p.m, err = newInstruments(p); err != nil {
			return fail(fmt.Errorf("telemetry: instruments: %w", err))
		}
	}
	return p, nil
}

// signalOn reports whether OTLP export of a signal ("TRACES",
// "METRICS") is configured, by the section or by the environment.
func signalOn(cfg config.Telemetry, env func(string) string, signal string) bool {
	if strings.EqualFold(env("OTEL_"+signal+"_EXPORTER"), "none") {
		return false
	}
	return cfg.Endpoint != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

func loopbackOrTLS(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// scopeName names the tracer and the meter.
const scopeName = "github.com/scratchpad-mcp/scratchpad-mcp/telemetry"

// defaultServiceName is service.name without service_name or
// OTEL_SERVICE_NAME.
const defaultServiceName = "scratchpad-mcp"

func newResource(ctx context.Context, cfg config.Telemetry, env func(string) string, version string) (*resource.Resource, error) {
	name := cfg.ServiceName
	if name == "" {
		name = env("OTEL_SERVICE_NAME")
	}
	if name == "" {
		name = defaultServiceName
	}
	var attrs []resource.Option
	if ra := env("OTEL_RESOURCE_ATTRIBUTES"); ra != "" {
		// Read by hand: resource.WithFromEnv reads os.Getenv, not lookup.
		for _, kv := range strings.Split(ra, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if ok && strings.TrimSpace(k) != "" {
				v, _ = url.QueryUnescape(strings.TrimSpace(v))
				attrs = append(attrs, resource.WithAttributes(attribute.String(strings.TrimSpace(k), v)))
			}
		}
	}
	// Last: the section's and OTEL_SERVICE_NAME's name wins over
	// OTEL_RESOURCE_ATTRIBUTES' service.name, as the specification says.
	attrs = append(attrs, resource.WithAttributes(semconv.ServiceName(name)))
	if version != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(version)))
	}
	r, err := resource.New(ctx, attrs...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return r, nil
}

// Close flushes what is queued (bounded by ctx) and stops the exporters
// and the audit log. Safe on a nil provider.
func (p *Provider) Close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	var errs []error
	if p.tp != nil {
		errs = append(errs, p.tp.Shutdown(ctx))
	}
	if p.mp != nil {
		errs = append(errs, p.mp.Shutdown(ctx))
	}
	if p.audit != nil {
		errs = append(errs, p.audit.close(ctx))
	}
	return errors.Join(errs...)
}

// Flush exports the spans queued so far (bounded by ctx); for tests and
// the shutdown path.
func (p *Provider) Flush(ctx context.Context) error {
	if p == nil || p.tp == nil {
		return nil
	}
	return p.tp.ForceFlush(ctx)
}

// Tracing reports whether spans are exported.
func (p *Provider) Tracing() bool { return p != nil && p.tracer != nil }

// RecordArguments reports whether [telemetry] record_arguments is on.
func (p *Provider) RecordArguments() bool { return p != nil && p.cfg.RecordArguments }

// DroppedSpans is how many spans the bounded queue dropped because the
// exporter did not keep up (also the metric scratchpad.telemetry.spans.dropped).
func (p *Provider) DroppedSpans() int64 {
	if p == nil || p.queue == nil {
		return 0
	}
	return p.queue.dropped.Load()
}

// DroppedAudit is how many audit lines were dropped (a full disk, a
// writer that does not keep up).
func (p *Provider) DroppedAudit() int64 {
	if p == nil || p.audit == nil {
		return 0
	}
	return p.audit.dropped.Load()
}
