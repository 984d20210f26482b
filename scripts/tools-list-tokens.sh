#!/bin/sh
# Counts the tokens of the whole tools/list a client sees from
# scratchpad-mcp with no upstreams (explore, artifacts and pad tools, a
# coordinator's list, the default pad), as JSON, with the tokens command;
# ROLE=worker counts a worker's list (no write_artifact) instead.
#
#   scripts/tools-list-tokens.sh [binary]   (default: builds ./cmd/scratchpad-mcp)
set -eu
BIN=${1:-}
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
if [ -z "$BIN" ]; then
	go build -o "$D/scratchpad-mcp" ./cmd/scratchpad-mcp
	BIN=$D/scratchpad-mcp
fi
printf 'memory_dir = "%s"\n' "$D/mem" > "$D/c.toml"
{
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
	sleep 2
} | "$BIN" serve --config "$D/c.toml" --role "${ROLE:-coordinator}" 2>/dev/null | grep '"id":2' |
	python3 -c 'import json,sys; t=json.load(sys.stdin)["result"]["tools"]; print(json.dumps(t, separators=(",", ":"), ensure_ascii=False)); print(len(t), "tools", file=sys.stderr)' > "$D/tools.json"
for m in "--model gpt-4o" "--model claude-sonnet-4" "--encoding cl100k_base"; do
	# shellcheck disable=SC2086
	printf '%s\t%s\n' "$("$BIN" tokens $m "$D/tools.json" | cut -f1)" "$m"
done
