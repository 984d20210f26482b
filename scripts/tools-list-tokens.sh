#!/bin/sh
# Counts the tokens of the whole tools/list a client sees from
# scratchpad-mcp with no upstreams (explore, artifacts and pad tools, a
# coordinator's list, the default pad and memory tool), as JSON, with the
# tokens command; ROLE=worker counts a worker's list (no write_artifact)
# instead. EXTRA is appended to the config; TOOL=name counts that tool's
# entry alone.
#
#   scripts/tools-list-tokens.sh [binary]   (default: builds ./cmd/scratchpad-mcp)
#   EXTRA='[agent.scratchpad]
#   memory_tool = ""' scripts/tools-list-tokens.sh   (the listing without the memory tool)
#   TOOL=memory scripts/tools-list-tokens.sh         (the memory tool alone)
set -eu
BIN=${1:-}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
if [ -z "$BIN" ]; then
	go build -o "$D/scratchpad-mcp" ./cmd/scratchpad-mcp
	BIN=$D/scratchpad-mcp
fi
printf 'memory_dir = "%s"\n%s\n' "$D/mem" "${EXTRA:-}" > "$D/c.toml"
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	sleep 2
} | "$BIN" serve --config "$D/c.toml" --role "${ROLE:-coordinator}" 2>/dev/null | grep '"id":2' |
	TOOL=${TOOL:-} python3 -c 'import json,os,sys; t=json.load(sys.stdin)["result"]["tools"]; n=os.environ["TOOL"]; t=[x for x in t if x["name"]==n] if n else t; print(json.dumps(t, separators=(",", ":"), ensure_ascii=False)); print(len(t), "tools", file=sys.stderr)' > "$D/tools.json"
for m in "--model gpt-4o" "--model claude-sonnet-4" "--encoding cl100k_base"; do
	# shellcheck disable=SC2086
	printf '%s\t%s\n' "$("$BIN" tokens $m "$D/tools.json" | cut -f1)" "$m"
done
