#!/usr/bin/env bash
# Installs what the tests need beyond the Go toolchain: Go modules,
# staticcheck (pinned, into GOPATH/bin), redis-server (the pad's Redis backend is tested against a real server,
# started by internal/testredis), jq (explore's query answers are
# cross-checked with it), and the npm packages of the end-to-end
# tests (e2e/: the TypeScript MCP SDK v1 and v2 client and server,
# server-filesystem, server-everything and the MCP conformance suites
# 0.1.16 and 0.2.0-alpha.12, pinned by e2e/package-lock.json) into
# e2e/node_modules, the MCP App view's browser test's (ext-apps 2.0.4's
# AppBridge, the MCP client v2, playwright-core driving Debian's
# chromium; pinned by e2e/appview/package-lock.json) into
# e2e/appview/node_modules, and the MCP Bundle CLI of make mcpb and its test
# (@anthropic-ai/mcpb 2.1.2, pinned by scripts/dist/package-lock.json)
# into scripts/dist/node_modules.
#
# Idempotent and quiet: redis-server is installed only when it is not on
# PATH; npm ci (scripts/npmci.sh) runs only when a node_modules is missing
# or was installed from another package-lock.json. Without node/npm (or with a node too old
# for the pinned packages) it says so and skips them; the e2e tests then
# skip too, or fail under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

go mod download

# staticcheck, pinned, into GOPATH/bin (make test runs it); reinstalled
# only when missing or another version.
staticcheck_version=0.8.2
staticcheck="$(go env GOPATH)/bin/staticcheck"
if ! "$staticcheck" -version 2>/dev/null | grep -qF "(${staticcheck_version})"; then
	go install "honnef.co/go/tools/cmd/staticcheck@v${staticcheck_version}"
fi

# redis-server, haproxy, jq, promtool (package prometheus) and chromium:
# from the distribution's packages (sudo only when not root). The tests
# need the binaries only; no service is enabled or started here.
apt_install() { # apt_install BINARY PACKAGE WHY
	if command -v "$1" >/dev/null 2>&1; then
		return
	fi
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then
		sudo="sudo"
	fi
	if ! out="$($sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq 2>&1 &&
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" 2>&1)"; then
		echo "$out" >&2
		echo "deps: installing $2 failed ($3)" >&2
		exit 1
	fi
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "deps: $2 was installed but $1 is not on PATH" >&2
		exit 1
	fi
}
apt_install redis-server redis-server "the pad's Redis tests need it"
apt_install haproxy haproxy "the replica tests balance real processes with it"
apt_install jq jq "explore's query tests cross-check their answers with it"
apt_install promtool prometheus "telemetry's test checks the metrics text with promtool check metrics"
apt_install chromium chromium "the dashboard's test and the MCP App view's test (e2e/appview_test.go) render pages in headless Chromium"

e2e_node_major=20 # @hono/node-server (via the SDK) needs node >= 20

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "deps: node/npm not found: skipping the npm packages (install Node.js >= ${e2e_node_major} and npm to run the e2e and packaging tests)" >&2
	exit 0
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt "$e2e_node_major" ]; then
	echo "deps: node $(node --version) is older than ${e2e_node_major}: skipping the npm packages (the e2e and packaging tests will skip)" >&2
	exit 0
fi

./scripts/npmci.sh e2e
./scripts/npmci.sh e2e/appview
./scripts/npmci.sh scripts/dist
