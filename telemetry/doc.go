// Package telemetry is what an operator sees of scratchpad-mcp: traces
// over OTLP, metrics as Prometheus text and over OTLP, and an audit log of
// every call. It holds no MCP types: the server, proxy and explore wiring
// hand it plain values.
//
// # Opening
//
// [Open] reads the [telemetry] section (config.Telemetry) and the standard
// OTEL_* environment (OTEL_EXPORTER_OTLP_ENDPOINT and the per-signal
// variables, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none)
// and returns a [*Provider], or nil when nothing is configured. A nil
// provider is the "off" switch: every method of it, and of the nil
// [*Span] it hands out, does nothing and allocates nothing. Close it with
// [Provider.Close] at shutdown.
//
// # Export
//
// OTLP goes over HTTP with protobuf bodies (POST {endpoint}/v1/traces and
// /v1/metrics, what every collector takes on port 4318), written by hand
// over the OpenTelemetry SDK's span and metric data, and
// posted by this package's own client: the OpenTelemetry exporters pull
// in gRPC and the generated protobuf types, which were a third of the
// binary. The tests check every message against those exporters' own.
// OTLP over gRPC is not built in: protocol = "grpc", or
// OTEL_EXPORTER_OTLP_PROTOCOL=grpc, is an error ([ErrProtocol]) that says
// to use http/protobuf. The client reads the exporter variables the
// OpenTelemetry exporter read (headers, gzip compression, certificates,
// the metrics temporality and histogram aggregation preferences), per
// signal first; a refused export is [ErrExportStatus].
//
// # One request
//
// The server calls [Provider.StartServer] with an [Op] (method, target,
// session, protocol version, request id, params._meta) when a request
// arrives; a valid params._meta.traceparent (SEP-414) makes the span a
// child of the client's, a malformed one is ignored. The proxy calls
// [Provider.StartClient] before the upstream call and [Provider.Inject] to
// write the client span's traceparent into the upstream request's
// params._meta; divert and explore add [Provider.StartDivert] and
// [Provider.StartExplore] spans and put their figures on them with
// [Span.SetTokens] and [Span.SetFile]. [Span.End] takes an [Outcome]
// (error.type: the error's, or [ErrorTypeToolError] for isError) and
// records mcp.server.operation.duration or mcp.client.operation.duration.
// Spans are named "{mcp.method.name} {target}" and carry the MCP semantic
// conventions' attributes (semconv v1.41.0, mcpconv); argument values
// only with record_arguments.
//
// # Metrics
//
// Besides the durations: [Provider.RecordTokens] (diverted, extracted,
// passed through, charged, by server, tool and owner),
// [Provider.BudgetRemaining], [Provider.UpstreamRestarted],
// [Provider.Refused], [Provider.SessionEnded], and the drop counters of
// the span queue and the audit log. Every label value is bounded: past a
// cap of distinct values a label reads [OtherLabel]. [Provider.MetricsHandler]
// serves them as Prometheus text for metrics_addr; histograms use
// [DurationBuckets].
//
// # Audit
//
// [Provider.Audit] writes one [Record] per finished call as a JSON line
// (file or stderr) and keeps the recent ones for the dashboard
// ([Provider.Calls], per owner); [ReadAudit] reads a file back.
//
// # Bounded
//
// Nothing here waits for the network or the disk on a call's path: spans
// and audit lines go through bounded queues, and what a full queue cannot
// take is dropped and counted ([Provider.DroppedSpans],
// [Provider.DroppedAudit]). Exports have a timeout and are not retried.
package telemetry
