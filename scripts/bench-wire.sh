#!/usr/bin/env bash
# Big results at wire speed (issue 17): a go-sdk client calls the bench
# upstream's blob tool directly and through scratchpad-mcp, ~24 MB and
# ~123 MB on the wire, passed through and diverted, over stdio serving,
# streamable HTTP serving and from a streamable-HTTP upstream. Medians,
# proxy/direct ratio, the proxy's peak RSS (VmHWM). Knobs: WIRE_SIZES
# (MB, comma-separated), WIRE_RUNS, WIRE_FORMAT (json, ndjson, text),
# WIRE_PATHS (upstream>serving pairs).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -tags bench -count=1 -timeout 30m -run 'TestBenchWire$' -v ./cmd/scratchpad-mcp/ 2>&1 |
  grep -E '^(path|stdio|http) |FAIL|panic|_test.go' || true
