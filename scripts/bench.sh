#!/usr/bin/env bash
# make bench: Go benchmarks of every package, then each scripts/bench-*.sh,
# which run a reference tool (tiktoken, GNU grep, jq) side by side with ours
# on the same input and print medians and ratios (bench-toolsearch.sh has no
# reference tool: it prints tool search's recall, answer tokens and latency;
# bench-replicas.sh compares 1 replica with 3 behind haproxy on one Redis).
# Figures only: nothing here passes or fails on time.
set -uo pipefail
cd "$(dirname "$0")/.."
echo "== Go benchmarks (go test -bench . -benchtime 1s -count 1 -run '^$' ./...)"
go test -run '^$' -bench . -benchtime 1s -count 1 ./... 2>&1 | grep -E '^(Benchmark|ok|FAIL|pkg:)' || true
status=0
for s in scripts/bench-*.sh; do
  echo
  echo "== $s"
  bash "$s" || { echo "$s failed" >&2; status=1; }
done
exit $status
