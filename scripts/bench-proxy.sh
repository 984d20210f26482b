#!/usr/bin/env bash
# Proxy figures for issue 2: pass-through latency (p50/p99 over 1000 calls,
# direct vs through scratchpad-mcp), start-up time with 3 stdio upstreams,
# end-to-end divert of a 20 MB JSON result.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -tags bench -count=1 -run 'TestBench' -v ./cmd/scratchpad-mcp/ 2>/dev/null | grep -E '^(pass-through|process start|20 MB|telemetry)' 
