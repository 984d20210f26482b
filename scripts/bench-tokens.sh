#!/usr/bin/env bash
# Token counting, side by side with the reference (OpenAI's tiktoken, Rust
# core in WASM, via ../shared/bench/tokref) on the same generated inputs:
#   1. full exact count of a ~4 MB Kubernetes-style JSON listing, MB/s (goal: ours >= 2x tiktoken)
#   2. divert decision (--at-least 25000) on a 20 MB output, ms   (goal: <= 50 ms)
#   3. count of a 2 KB result, us, from the Go benchmark          (goal: <= 50 us)
#   4. the Go libraries considered (pkoukk/tiktoken-go, tiktoken-go/tokenizer) against this
#      package on the Go benchmark's 4 MB listing, MB/s on one core (SKIP_LIBS=1 skips it)
#   5. gemma3 (Gemini): full exact count of the same listing against the JS Gemma 3 tokenizer
#      (tokref gemma3), all cores and one core (goal: >= 5 MB/s on one core), load time, and the
#      heap the loaded vocabulary keeps, from the Go benchmark (goal: load <= 100 ms, <= 60 MB)
#      (SKIP_GEMMA=1 skips it)
# RUNS (default 5) runs each; medians are printed. TOKREF overrides the reference path.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
tokref=${TOKREF:-../shared/bench/tokref}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Always a fresh build (bin/ may be stale). If another package is mid-edit
# and the full command does not build, the tokens subcommand alone does.
bin=$work/scratchpad-mcp
go build -o "$bin" ./cmd/scratchpad-mcp 2>/dev/null ||
  go build -o "$bin" cmd/scratchpad-mcp/main.go cmd/scratchpad-mcp/cmd_tokens.go

# Deterministic `kubectl get pods -o json`-style listing.
gen_listing() { # $1 = minimum bytes
  awk -v min="$1" 'BEGIN {
    printf "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n"; n = 0
    for (i = 0; n < min; i++) {
      h = (i * 2654435761) % 2147483647
      s = sprintf("%s        {\n            \"apiVersion\": \"v1\",\n            \"kind\": \"Pod\",\n            \"metadata\": {\n                \"creationTimestamp\": \"2024-05-%02dT%02d:%02d:%02dZ\",\n                \"labels\": {\n                    \"app\": \"web\",\n                    \"pod-template-hash\": \"%x\"\n                },\n                \"name\": \"web-%d-%x\",\n                \"namespace\": \"prod\",\n                \"resourceVersion\": \"%d\",\n                \"uid\": \"%08x-%04x-%04x\"\n            },\n            \"spec\": {\n                \"containers\": [\n                    {\n                        \"image\": \"nginx:1.25.%d\",\n                        \"name\": \"nginx\",\n                        \"ports\": [\n                            {\n                                \"containerPort\": 8080,\n                                \"protocol\": \"TCP\"\n                            }\n                        ],\n                        \"resources\": {\n                            \"limits\": {\n                                \"cpu\": \"500m\",\n                                \"memory\": \"256Mi\"\n                            }\n                        }\n                    }\n                ],\n                \"nodeName\": \"ip-10-0-%d-%d.ec2.internal\"\n            },\n            \"status\": {\n                \"phase\": \"%s\",\n                \"podIP\": \"10.244.%d.%d\"\n            }\n        }",
        (i > 0 ? ",\n" : ""), 1 + i % 28, i % 24, i % 60, (i * 7) % 60, h % 1048575, i, h % 65535,
        100000 + i * 13, h, i % 65536, (h / 7) % 65536, i % 10, i % 255, (i * 7) % 255,
        (i % 3 == 0 ? "Running" : (i % 3 == 1 ? "Pending" : "Succeeded")), int(i / 255) % 255, i % 255)
      printf "%s", s; n += length(s)
    }
    printf "\n    ],\n    \"kind\": \"List\"\n}\n"
  }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*$1=\([0-9.e+-]*\).*/\1/p"; } # value of key=value on stdin

gen_listing 4200000 >"$work/listing.json"
for _ in 1 2 3 4 5; do cat "$work/listing.json"; done >"$work/20mb.json"
head -c 2048 "$work/listing.json" >"$work/2kb.json"
printf 'inputs: listing %d bytes, 20 MB output %d bytes; %d runs each; %s cores\n' \
  "$(wc -c <"$work/listing.json")" "$(wc -c <"$work/20mb.json")" "$runs" "$(nproc)"

echo
echo "1. full exact count of the listing (MB/s, median)"
printf '%-12s %10s %12s %10s %8s %12s %10s\n' encoding tokens tiktoken ours ratio tiktok_load ours_load
for enc in o200k_base cl100k_base; do
  ref_mbps=() ours_mbps=() ref_load=() ours_load=()
  ref_tokens=0 ours_tokens=0
  for _ in $(seq "$runs"); do
    line=$("$tokref" "$enc" "$work/listing.json")
    ref_tokens=$(field tokens <<<"$line")
    ref_mbps+=("$(field mb_per_s <<<"$line")")
    ref_load+=("$(field load_s <<<"$line")")
    out=$("$bin" tokens --encoding "$enc" --time "$work/listing.json" 2>"$work/err")
    ours_tokens=${out%%$'\t'*}
    ours_mbps+=("$(grep count_s "$work/err" | field mb_per_s)")
    ours_load+=("$(field load_s <"$work/err")")
  done
  r=$(printf '%s\n' "${ref_mbps[@]}" | median)
  o=$(printf '%s\n' "${ours_mbps[@]}" | median)
  rl=$(printf '%s\n' "${ref_load[@]}" | median)
  ol=$(printf '%s\n' "${ours_load[@]}" | median)
  printf '%-12s %10s %12s %10s %7.2fx %11ss %9ss\n' "$enc" "$ours_tokens" "$r" "$o" "$(awk -v a="$o" -v b="$r" 'BEGIN { print a / b }')" "$rl" "$ol"
  if [ "$ref_tokens" != "$ours_tokens" ]; then
    echo "MISMATCH: tiktoken counted $ref_tokens, ours $ours_tokens" >&2
    exit 1
  fi
done

echo
echo "2. divert decision on the 20 MB output, o200k_base (median)"
ours_ms=()
for _ in $(seq "$runs"); do
  "$bin" tokens --encoding o200k_base --at-least 25000 --time "$work/20mb.json" >/dev/null 2>"$work/err"
  ours_ms+=("$(grep count_s "$work/err" | field count_s | awk '{ print $1 * 1000 }')")
done
line=$("$tokref" o200k_base "$work/20mb.json")
printf '  ours --at-least 25000: %s ms    tiktoken full count (no early stop): %s ms\n' \
  "$(printf '%s\n' "${ours_ms[@]}" | median)" "$(field encode_s <<<"$line" | awk '{ print $1 * 1000 }')"

echo
echo "3. count of a 2 KB result (Go benchmark, o200k_base, cl100k_base and gemma3)"
go test -run XXX -bench 'BenchmarkCount2KB' -benchtime 20000x -count "$runs" ./tokens/ >"$work/bench2k"
for enc in o200k_base cl100k_base gemma3; do
  printf '  ours %-12s %s us\n' "$enc" "$(awk -v e="BenchmarkCount2KB/$enc-" 'index($1, e) == 1 { print $3 / 1000 }' "$work/bench2k" | median)"
done
line=$("$tokref" o200k_base "$work/2kb.json")
printf '  tiktoken (one call in node, indicative only): %s us\n' "$(field encode_s <<<"$line" | awk '{ print $1 * 1e6 }')"

if [ "${SKIP_LIBS:-0}" != 1 ]; then
  echo
  echo "4. Go libraries on the Go benchmark's 4 MB listing (MB/s, median, one core each)"
  go test -run XXX -bench 'BenchmarkCount$/(ours-1core|tiktoken-go-tokenizer|pkoukk-tiktoken-go)/' -benchtime 1x -count 3 ./tokens/ >"$work/libs"
  printf '  %-24s %12s %12s\n' implementation o200k_base cl100k_base
  for impl in ours-1core tiktoken-go-tokenizer pkoukk-tiktoken-go; do
    row=()
    for enc in o200k_base cl100k_base; do
      row+=("$(awk -v e="BenchmarkCount/$impl/$enc-" 'index($1, e) == 1 { print $5 }' "$work/libs" | median)")
    done
    printf '  %-24s %12s %12s\n' "$impl" "${row[@]}"
  done
fi

if [ "${SKIP_GEMMA:-0}" != 1 ]; then
  echo
  echo "5. gemma3 (Gemini): full exact count of the listing (MB/s, median), reference: JS Gemma 3 tokenizer"
  printf '%-8s %10s %10s %10s %12s %8s %10s %10s\n' encoding tokens reference ours ours_1core ratio ref_load ours_load
  ref_mbps=() ours_mbps=() one_mbps=() ref_load=() ours_load=()
  ref_tokens=0 ours_tokens=0 one_tokens=0
  for _ in $(seq "$runs"); do
    line=$("$tokref" gemma3 "$work/listing.json")
    ref_tokens=$(field tokens <<<"$line")
    ref_mbps+=("$(field mb_per_s <<<"$line")")
    ref_load+=("$(field load_s <<<"$line")")
    out=$("$bin" tokens --encoding gemma3 --time "$work/listing.json" 2>"$work/err")
    ours_tokens=${out%%$'\t'*}
    ours_mbps+=("$(grep count_s "$work/err" | field mb_per_s)")
    ours_load+=("$(field load_s <"$work/err")")
    out=$(GOMAXPROCS=1 "$bin" tokens --encoding gemma3 --time "$work/listing.json" 2>"$work/err")
    one_tokens=${out%%$'\t'*}
    one_mbps+=("$(grep count_s "$work/err" | field mb_per_s)")
  done
  r=$(printf '%s\n' "${ref_mbps[@]}" | median)
  o=$(printf '%s\n' "${ours_mbps[@]}" | median)
  o1=$(printf '%s\n' "${one_mbps[@]}" | median)
  rl=$(printf '%s\n' "${ref_load[@]}" | median)
  ol=$(printf '%s\n' "${ours_load[@]}" | median)
  printf '%-8s %10s %10s %10s %12s %7.2fx %9ss %9ss\n' gemma3 "$ours_tokens" "$r" "$o" "$o1" "$(awk -v a="$o1" -v b="$r" 'BEGIN { print a / b }')" "$rl" "$ol"
  echo "  (ratio: ours on one core / reference)"
  if [ "$ref_tokens" != "$ours_tokens" ] || [ "$ref_tokens" != "$one_tokens" ]; then
    echo "MISMATCH: reference counted $ref_tokens, ours $ours_tokens (one core: $one_tokens)" >&2
    exit 1
  fi
  # Go benchmarks: wall and CPU time (the machine may be shared), heap kept.
  go test -run XXX -bench 'BenchmarkLoadGemma3|BenchmarkCount$/ours-1core/gemma3' -benchtime 5x -count "$runs" ./tokens/ >"$work/gload"
  printf '  one core, Go benchmark on its 4 MB listing: %s MB/s wall, %s MB/s by CPU time\n' \
    "$(awk 'index($1, "BenchmarkCount/ours-1core/gemma3") == 1 { print $5 }' "$work/gload" | median)" \
    "$(awk 'index($1, "BenchmarkCount/ours-1core/gemma3") == 1 { print $7 }' "$work/gload" | median)"
  printf '  load, Go benchmark: %s ms wall, %s ms CPU (both parts, all threads); heap kept after load: %s MB\n' \
    "$(awk 'index($1, "BenchmarkLoadGemma3") == 1 { print $3 / 1e6 }' "$work/gload" | median)" \
    "$(awk 'index($1, "BenchmarkLoadGemma3") == 1 { print $5 }' "$work/gload" | median)" \
    "$(awk 'index($1, "BenchmarkLoadGemma3") == 1 { print $7 }' "$work/gload" | median)"
fi
