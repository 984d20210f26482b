package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"google.golang.org/protobuf/encoding/protowire"
)

// Sentinel errors of an export.
var (
	// ErrExportStatus: the endpoint answered an export with a status
	// other than 2xx (the error has the status and the start of the body).
	ErrExportStatus = errors.New("telemetry: OTLP endpoint refused the export")
	// ErrPartialSuccess: the endpoint took the export but rejected part
	// of it (its partial_success); reported to OpenTelemetry's error
	// handler, as the OpenTelemetry exporters did.
	ErrPartialSuccess = errors.New("telemetry: OTLP endpoint rejected part of an export")
	// ErrExporterShutdown: an export after Shutdown.
	ErrExporterShutdown = errors.New("telemetry: exporter shut down")
)

// otlpClient posts one signal's protobuf bodies to its URL: OTLP/HTTP,
// which every collector accepts on its port 4318. Written here instead of
// the OpenTelemetry exporters, whose protobuf types pull in the collector
// packages and with them gRPC: a third of the binary (docs/performance.md,
// "Binary size").
type otlpClient struct {
	url       string
	signal    string // "traces", "metrics": for errors
	headers   map[string]string
	gzip      bool
	userAgent string
	timeout   time.Duration
	http      *http.Client
	stopped   atomic.Bool
}

// maxResponseBytes bounds what is read of an answer.
const maxResponseBytes = 64 << 10

// newOTLPClient: signal is "TRACES" or "METRICS". What the section says
// wins over the environment (headers); the rest is read from the standard
// per-signal, then general, variables (compression, certificates).
func newOTLPClient(cfg cfgView, env func(string) string, signal, rawURL, version string) (*otlpClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("telemetry: %s endpoint %q: want http(s)://host:port/path", strings.ToLower(signal), rawURL)
	}
	get := func(name string) (string, string) {
		for _, k := range []string{"OTEL_EXPORTER_OTLP_" + signal + "_" + name, "OTEL_EXPORTER_OTLP_" + name} {
			if v := env(k); v != "" {
				return k, v
			}
		}
		return "", ""
	}
	c := &otlpClient{url: u.String(), signal: strings.ToLower(signal), headers: cfg.headers, timeout: cfg.timeout,
		userAgent: "scratchpad-mcp/" + version + " (OTLP/HTTP protobuf " + strings.ToLower(signal) + ")"}
	if len(c.headers) == 0 {
		if _, v := get("HEADERS"); v != "" {
			c.headers = parseHeaders(v)
		}
	}
	switch k, v := get("COMPRESSION"); strings.ToLower(v) {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("telemetry: %s=%q: want \"gzip\" or \"none\"", k, v)
	}
	tlsConf, err := clientTLS(get)
	if err != nil {
		return nil, err
	}
	// The default transport's proxy from the environment and its
	// timeouts, with the certificates the environment names.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf
	}
	c.http = &http.Client{Transport: tr}
	return c, nil
}

// cfgView is what a client takes from the [telemetry] section.
type cfgView struct {
	headers map[string]string
	timeout time.Duration
}

// parseHeaders reads "k1=v1,k2=v2" (values URL-encoded), as the OTLP
// exporter specification says; a pair without "=" is skipped.
func parseHeaders(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dv
		}
		out[k] = strings.TrimSpace(v)
	}
	return out
}

// clientTLS is the TLS configuration of the CERTIFICATE, CLIENT_CERTIFICATE
// and CLIENT_KEY variables (PEM files); nil when none is set. A file that
// cannot be read is an error naming the variable.
func clientTLS(get func(string) (string, string)) (*tls.Config, error) {
	caKey, ca := get("CERTIFICATE")
	certKey, cert := get("CLIENT_CERTIFICATE")
	keyKey, key := get("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %s: %w", caKey, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("telemetry: %s: %s holds no PEM certificate", caKey, ca)
		}
		conf.RootCAs = pool
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("telemetry: %s%s: a client certificate needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY", certKey, keyKey)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %s, %s: %w", certKey, keyKey, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// post sends one export request and reads its answer. Not retried: the
// queue, not the exporter, absorbs an endpoint that is down.
func (c *otlpClient) post(ctx context.Context, body []byte) error {
	if c.stopped.Load() {
		return ErrExporterShutdown
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body) // a bytes.Buffer does not fail
		_ = zw.Close()
		body = buf.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("telemetry: %s export: %w", c.signal, err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", c.userAgent)
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("telemetry: %s export: %w", c.signal, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		text := strings.TrimSpace(string(answer))
		if len(text) > 512 {
			text = truncate(text, 512) + "…"
		}
		return fmt.Errorf("%w: %s to %s: %s: %s", ErrExportStatus, c.signal, c.url, resp.Status, text)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/x-protobuf") {
		if rejected, msg := partialSuccess(answer); rejected > 0 || msg != "" {
			otel.Handle(fmt.Errorf("%w: %s: %d rejected: %s", ErrPartialSuccess, c.signal, rejected, msg))
		}
	}
	return nil
}

// partialSuccess reads Export{Trace,Metrics}ServiceResponse.partial_success
// (field 1: {rejected = 1, error_message = 2}); zero for an answer that
// has none or that does not parse.
func partialSuccess(b []byte) (rejected int64, msg string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return 0, ""
			}
			b = b[n:]
			for len(v) > 0 {
				num, typ, n := protowire.ConsumeTag(v)
				if n < 0 {
					return 0, ""
				}
				v = v[n:]
				switch {
				case num == 1 && typ == protowire.VarintType:
					x, n := protowire.ConsumeVarint(v)
					if n < 0 {
						return 0, ""
					}
					rejected, v = int64(x), v[n:]
				case num == 2 && typ == protowire.BytesType:
					s, n := protowire.ConsumeBytes(v)
					if n < 0 {
						return 0, ""
					}
					msg, v = string(s), v[n:]
				default:
					n := protowire.ConsumeFieldValue(num, typ, v)
					if n < 0 {
						return 0, ""
					}
					v = v[n:]
				}
			}
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return 0, ""
		}
		b = b[n:]
	}
	return rejected, msg
}

// shutdown refuses further exports and lets the idle connections go.
func (c *otlpClient) shutdown() {
	c.stopped.Store(true)
	c.http.CloseIdleConnections()
}
