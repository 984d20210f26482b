package telemetry

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// MetricsHandler serves the metrics as Prometheus text (exposition format
// 0.0.4) for [telemetry] metrics_addr; nil when metrics_addr is not set.
// Written here from the SDK's collected data rather than with the
// Prometheus exporter, which would pull in client_golang and its
// dependencies for one text format.
func (p *Provider) MetricsHandler() http.Handler {
	if p == nil || p.prom == nil {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := p.prom.Collect(r.Context(), &rm); err != nil {
			http.Error(w, "collect: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		bw := bufio.NewWriter(w)
		writePrometheus(bw, &rm)
		_ = bw.Flush()
	})
}

// promName turns an OpenTelemetry name and unit into a Prometheus one:
// dots become underscores, seconds get "_seconds", counters "_total".
func promName(name, unit string, counter bool) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == ':' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if unit == "s" && !strings.HasSuffix(s, "_seconds") {
		s += "_seconds"
	}
	if counter {
		s += "_total"
	}
	return s
}

func promLabel(k attribute.Key) string {
	return promName(string(k), "", false)
}

// labels writes {k="v",…} of set plus extra (le="…"); "" for no labels.
func labels(set attribute.Set, extraK, extraV string) string {
	var parts []string
	for _, kv := range set.ToSlice() {
		parts = append(parts, promLabel(kv.Key)+`="`+escapeLabel(kv.Value.String())+`"`)
	}
	if extraK != "" {
		parts = append(parts, extraK+`="`+extraV+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }

var helpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`)

func num(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func writePrometheus(w *bufio.Writer, rm *metricdata.ResourceMetrics) {
	type family struct {
		name, help, typ string
		lines           []string
	}
	var fams []family
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			f := family{help: m.Description}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				f.name, f.typ = promName(m.Name, m.Unit, d.IsMonotonic), "counter"
				if !d.IsMonotonic {
					f.typ = "gauge"
				}
				for _, dp := range d.DataPoints {
					f.lines = append(f.lines, f.name+labels(dp.Attributes, "", "")+" "+strconv.FormatInt(dp.Value, 10))
				}
			case metricdata.Sum[float64]:
				f.name, f.typ = promName(m.Name, m.Unit, d.IsMonotonic), "counter"
				if !d.IsMonotonic {
					f.typ = "gauge"
				}
				for _, dp := range d.DataPoints {
					f.lines = append(f.lines, f.name+labels(dp.Attributes, "", "")+" "+num(dp.Value))
				}
			case metricdata.Gauge[int64]:
				f.name, f.typ = promName(m.Name, m.Unit, false), "gauge"
				for _, dp := range d.DataPoints {
					f.lines = append(f.lines, f.name+labels(dp.Attributes, "", "")+" "+strconv.FormatInt(dp.Value, 10))
				}
			case metricdata.Gauge[float64]:
				f.name, f.typ = promName(m.Name, m.Unit, false), "gauge"
				for _, dp := range d.DataPoints {
					f.lines = append(f.lines, f.name+labels(dp.Attributes, "", "")+" "+num(dp.Value))
				}
			case metricdata.Histogram[float64]:
				f.name, f.typ = promName(m.Name, m.Unit, false), "histogram"
				for _, dp := range d.DataPoints {
					var cum uint64
					for i, b := range dp.Bounds {
						cum += dp.BucketCounts[i]
						f.lines = append(f.lines, f.name+"_bucket"+labels(dp.Attributes, "le", num(b))+" "+strconv.FormatUint(cum, 10))
					}
					f.lines = append(f.lines,
						f.name+"_bucket"+labels(dp.Attributes, "le", "+Inf")+" "+strconv.FormatUint(dp.Count, 10),
						f.name+"_sum"+labels(dp.Attributes, "", "")+" "+num(dp.Sum),
						f.name+"_count"+labels(dp.Attributes, "", "")+" "+strconv.FormatUint(dp.Count, 10))
				}
			default:
				continue
			}
			fams = append(fams, f)
		}
	}
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	for _, f := range fams {
		if f.help != "" {
			fmt.Fprintf(w, "# HELP %s %s\n", f.name, helpEscaper.Replace(f.help))
		}
		fmt.Fprintf(w, "# TYPE %s %s\n", f.name, f.typ)
		for _, l := range f.lines {
			w.WriteString(l)
			w.WriteByte('\n')
		}
	}
}
