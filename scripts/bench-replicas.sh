#!/usr/bin/env bash
# Replicas (issue 34): calls/s and p50/p99 of CLIENTS concurrent agents
# doing a realistic call mix (a small pass-through call, a divert, two
# exploration calls on it; scripts/replicabench) against 1 replica, and
# against 3 replicas behind haproxy round-robin (no stickiness), one
# redis-server for [cluster] and the pad; for 2025 sessions and
# 2026-07-28 callers; then the memory one replica holds per idle session.
# 1 replica without [cluster] is the baseline of what Redis costs. Medians
# of RUNS runs. Figures only: nothing here passes or fails on time.
#
#   CLIENTS=8 DURATION=8s RUNS=3 SESSIONS=200 scripts/bench-replicas.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-8s}
RUNS=${RUNS:-3}
SESSIONS=${SESSIONS:-200}
for b in redis-server redis-cli haproxy; do
  command -v "$b" >/dev/null || { echo "bench-replicas: $b not found: run scripts/deps.sh" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap 'stop; kill "${redis_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

go build -o "$tmp/scratchpad-mcp" ./cmd/scratchpad-mcp
go build -o "$tmp/replicabench" ./scripts/replicabench

rport=$(freeport)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 50); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis_url="redis://127.0.0.1:$rport/0"

# config FILE MEM CLUSTER(0|1)
config() {
  cat >"$1" <<TOML
memory_dir = "$2"
[agent]
model = "gpt-4o"
context_window = 100000000   # budgets never run out during the run
[agent.scratchpad]
max_extraction_tokens = 2000
[mcp.servers.k8s]
transport = "stdio"
cmd = ["$tmp/replicabench"]
env = { SCRATCHPAD_TESTUPSTREAM = "stdio" }
[mcp.servers.k8s.scratchpad]
"listing" = { min_tokens = 1000 }
TOML
  if [ "$3" = 1 ]; then
    printf '[cluster]\nredis_url = "%s"\nprefix = "bench"\n[pad]\nscope = "run"\nbackend = "redis"\nredis_url = "%s"\n' "$redis_url" "$redis_url" >>"$1"
  fi
}

# replica N CLUSTER: starts replica N, sets $addr and $rpid.
replica() {
  local dir="$tmp/r$1"
  mkdir -p "$dir"
  config "$dir/c.toml" "$dir/mem" "$2"
  "$tmp/scratchpad-mcp" serve --config "$dir/c.toml" --transport http --addr 127.0.0.1:0 --debug-stats 2>"$dir/log" &
  rpid=$!
  pids+=("$rpid")
  addr=""
  for _ in $(seq 100); do
    addr=$(sed -n 's/.*msg=serving .*addr=\([^ ]*\).*/\1/p' "$dir/log" | head -1)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  [ -n "$addr" ] || { echo "replica $1 did not start:" >&2; cat "$dir/log" >&2; exit 1; }
  for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/readyz")" = 200 ] && break
    sleep 0.1
  done
}

# haproxy ADDR...: docs/replicas.md's configuration in front of them; sets $front.
haproxy_front() {
  local port servers="" i=0
  port=$(freeport)
  for a in "$@"; do servers+="  server r$i $a check inter 1s fall 2 rise 1"$'\n'; i=$((i + 1)); done
  cat >"$tmp/haproxy.cfg" <<CFG
global
  maxconn 1024
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch 1
  option http-server-close
frontend fe
  bind 127.0.0.1:$port
  default_backend be
backend be
  balance roundrobin
  option httpchk GET /readyz
$servers
CFG
  haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
  front="127.0.0.1:$port"
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
field() { sed -n "s|.* $1=\([^ ]*\).*|\1|p"; }

# bench NAME URL: RUNS runs per era; prints the medians, keeps calls/s.
declare -A rate
bench() {
  local name=$1 url=$2 proto out
  for proto in 2025-11-25 2026-07-28; do
    : >"$tmp/runs"
    for _ in $(seq "$RUNS"); do
      out=$("$tmp/replicabench" run -url "$url" -clients "$CLIENTS" -duration "$DURATION" -proto "$proto") || { echo "$name $proto: $out" >&2; exit 1; }
      echo " $out" >>"$tmp/runs"
    done
    local cps p50 p99
    cps=$(field 'calls/s' <"$tmp/runs" | median)
    p50=$(field p50_ms <"$tmp/runs" | median)
    p99=$(field p99_ms <"$tmp/runs" | median)
    rate[$name/$proto]=$cps
    printf '%-34s %-10s %8s calls/s   p50 %6s ms   p99 %7s ms\n' "$name" "$proto" "$cps" "$p50" "$p99"
  done
}

echo "$CLIENTS clients, $DURATION per run, medians of $RUNS runs; mix per round: echo, listing (diverted), head, grep"
replica 0 0
bench "1 replica, no [cluster]" "http://$addr/mcp"
stop
redis-cli -p "$rport" flushall >/dev/null
replica 0 1
bench "1 replica, [cluster] on Redis" "http://$addr/mcp"
echo "-- memory of one replica ([cluster] on), $SESSIONS idle sessions/callers:"
"$tmp/replicabench" mem -url "http://$addr/mcp" -pid "$rpid" -n "$SESSIONS"
stop
redis-cli -p "$rport" flushall >/dev/null
backends=()
for i in 0 1 2; do
  replica "$i" 1
  backends+=("$addr")
done
haproxy_front "${backends[@]}"
bench "3 replicas behind haproxy" "http://$front/mcp"
for proto in 2025-11-25 2026-07-28; do
  awk -v a="${rate[3 replicas behind haproxy/$proto]}" -v b="${rate[1 replica, [cluster] on Redis/$proto]}" -v p="$proto" \
    'BEGIN {printf "ratio 3 replicas / 1 replica (%s): %.2f\n", p, a / b}'
done
stop
kill "$redis_pid" 2>/dev/null || true
wait "$redis_pid" 2>/dev/null || true
