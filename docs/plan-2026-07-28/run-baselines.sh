#!/usr/bin/env bash
# Reproduces issue 33's baselines (conformance 0.2.0-alpha.12, --requirements 2026-07-28):
# go-sdk v1.8.0's everything-server directly, then through scratchpad-mcp (HTTP upstream, stdio upstream).
# Prereqs (done once): npm i in this folder (package.json pins the peers), bin/everything-server and
# bin/scratchpad-mcp built (see README.md). Ports 18931/18940/18941 on 127.0.0.1. Results under results/.
set -euo pipefail
cd "$(dirname "$0")"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
wait_port() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
rm -rf results mem-http mem-stdio; mkdir -p results mem-http mem-stdio
./bin/everything-server -http 127.0.0.1:18931 >results/es.log 2>&1 & pids+=($!)           # stateless (default)
wait_port 18931
./bin/scratchpad-mcp serve --config scratchpad-http.toml --transport http --addr 127.0.0.1:18940 --log-level info >results/sp-http.log 2>&1 & pids+=($!)
./bin/scratchpad-mcp serve --config scratchpad-stdio.toml --transport http --addr 127.0.0.1:18941 --log-level info >results/sp-stdio.log 2>&1 & pids+=($!)
wait_port 18940; wait_port 18941; sleep 1   # upstreams ready
for run in direct:18931 via-http:18940 via-stdio:18941; do
	name=${run%%:*} port=${run##*:}
	node conformance.mjs server --url http://127.0.0.1:$port/mcp --requirements 2026-07-28 -o results/$name >results/$name.txt 2>&1 || true
	required=$(node -e '
		const fs=require("fs"),yaml=fs.readFileSync("node_modules/@modelcontextprotocol/conformance/requirements/2026-07-28.yaml","utf8");
		const req=yaml.split("\nclient:")[0].split("\n").filter(l=>/^  - /.test(l)).map(l=>l.slice(4).trim());
		const sum=fs.readFileSync(process.argv[1],"utf8"); let ok=0;
		for (const s of req) if (new RegExp("✓ "+s.replace(/[-]/g,"\\-")+":").test(sum)) ok++;
		console.log(ok+"/"+req.length)' results/$name.txt)
	echo "$name: required scenarios passed $required; $(grep -E '^Total:' results/$name.txt)"
done
