#!/usr/bin/env bash
# GC over 100,000 stored files (scratchpad-mcp gc): time and peak memory
# (GNU time's maximum resident set size) of a dry run and of the real
# sweep, under the default [retention] (max_age 7d, runs_max_age 30d) plus
# max_bytes = 40MB. Figures only.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-100000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/scratchpad-mcp" ./cmd/scratchpad-mcp
go run ./scripts/gcfill -dir "$tmp/mem" -n "$N"
cat > "$tmp/c.toml" <<TOML
memory_dir = "$tmp/mem"
[retention]
max_bytes = "40MB"
TOML
timed() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -o "$tmp/time" -f "  %e s wall, %U s user, %S s sys, peak RSS %M KiB" "$@"; cat "$tmp/time"
  else
    time "$@"
  fi
}
echo "files: $(find "$tmp/mem" -type f | wc -l), $(du -sh "$tmp/mem" | cut -f1)"
echo "-- gc --dry-run"
timed "$tmp/scratchpad-mcp" gc --config "$tmp/c.toml" --dry-run
echo "-- gc"
timed "$tmp/scratchpad-mcp" gc --config "$tmp/c.toml"
echo "files left: $(find "$tmp/mem" -type f | wc -l)"
