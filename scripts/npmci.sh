#!/usr/bin/env bash
# npmci.sh DIR: installs DIR's npm packages exactly as DIR/package-lock.json
# pins them (npm ci) into DIR/node_modules. Idempotent and quiet: it does
# nothing when node_modules was installed from the same package-lock.json
# (a stamp file holds its sha256). Used by scripts/deps.sh (e2e/ and
# scripts/dist/) and make mcpb (scripts/dist/).
set -euo pipefail
dir="$1"
lock_sum="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
stamp="$dir/node_modules/.scratchpad-deps-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_sum" ]; then
	exit 0
fi
if ! out="$(cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error 2>&1)"; then
	echo "$out" >&2
	echo "npm ci in $dir failed" >&2
	exit 1
fi
echo "$lock_sum" >"$stamp"
