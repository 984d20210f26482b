#!/usr/bin/env bash
# Big results at wire speed (issue 17): a client (WIRE_CLIENT: raw, the
# default, reads the answers' bytes as the issue's figures were taken; sdk,
# go-sdk's client, decodes them) calls the bench
# upstream's blob tool directly and through scratchpad-mcp, ~24 MB and
# ~123 MB on the wire, passed through and diverted, over stdio serving,
# streamable HTTP serving and from a streamable-HTTP upstream. Medians,
# proxy/direct ratio, the proxy's peak RSS (VmHWM). Knobs: WIRE_SIZES
# (MB, comma-separated), WIRE_RUNS, WIRE_FORMAT (json, ndjson, text),
# WIRE_PATHS (upstream>serving pairs), WIRE_MODES (pass,divert), WIRE_DIRECT=0
# (no direct calls), WIRE_FLOOR=0 (no floors: the same client calling a
# replay peer that holds the answer ready, over the upstream's and the
# serving transport, and "adj", the ratio to the direct call moved onto the
# serving transport), WIRE_WARM=0 (no untimed first call through a proxy
# whose stdio upstream must build its output), WIRE_PROFILE=DIR (each proxy
# writes a CPU profile there: go tool pprof -top DIR/FILE), WIRE_SERVER_EXTRA (TOML lines for the server, e.g.
# max_result_bytes = 2147483648), WIRE_BIN (a scratchpad-mcp binary to run as
# the proxy instead of one built from this tree: before/after runs, e.g.
# git archive OLD | tar -x -C /tmp/old && (cd /tmp/old && go build -o
# /tmp/old.bin ./cmd/scratchpad-mcp), then WIRE_BIN=/tmp/old.bin).
set -euo pipefail
cd "$(dirname "$0")/.."
go test -tags bench -count=1 -timeout 30m -run 'TestBenchWire$' -v ./cmd/scratchpad-mcp/ 2>&1 |
  grep -E '^(client:|path|stdio|http|node) |tool error|FAIL|panic|_test.go' || true
