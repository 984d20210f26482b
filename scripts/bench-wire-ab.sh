#!/usr/bin/env bash
# Before/after of the big-result path on a shared, noisy machine: two
# scratchpad-mcp binaries (OLD, NEW) run in turn through bench-wire.sh,
# redaction on then off, ROUNDS times, so that both see the same load.
# Build the old one from a commit with
#   git archive COMMIT | tar -x -C /tmp/old && (cd /tmp/old && go build -o /tmp/old.bin ./cmd/scratchpad-mcp)
# Usage: scripts/bench-wire-ab.sh /tmp/old.bin /tmp/new.bin [OUTDIR]
# (ROUNDS, default 2; the WIRE_* knobs of bench-wire.sh pass through:
# WIRE_SIZES defaults to 24,123, WIRE_PATHS to stdio>stdio, WIRE_RUNS to 3,
# WIRE_FLOOR to 0.)
set -euo pipefail
old=$1 new=$2 out=${3:-/tmp/bench-wire-ab}
mkdir -p "$out"
cd "$(dirname "$0")/.."
for round in $(seq "${ROUNDS:-2}"); do
  for red in on off; do
    extra=""
    [ "$red" = off ] && extra='redaction = "off"'
    for which in old new; do
      bin=$old
      [ "$which" = new ] && bin=$new
      f="$out/r$round-$red-$which.txt"
      { echo "== round $round, redaction $red, $which ($bin)"; uptime
        WIRE_BIN="$bin" WIRE_SERVER_EXTRA="$extra" WIRE_SIZES="${WIRE_SIZES:-24,123}" WIRE_PATHS="${WIRE_PATHS:-stdio>stdio}" \
          WIRE_RUNS="${WIRE_RUNS:-3}" WIRE_FLOOR="${WIRE_FLOOR:-0}" bash scripts/bench-wire.sh
        uptime; } > "$f" 2>&1
      cat "$f"
    done
  done
done
