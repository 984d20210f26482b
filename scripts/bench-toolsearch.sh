#!/usr/bin/env bash
# Tool search figures (issue 28) for the test catalogue and query set in
# toolsearch/testdata: tools/list tokens of the whole catalogue, top-1 and
# top-3 recall, tokens of one search answer, search latency and index build
# over 1,000 tools. Figures only: nothing here fails on them (TestRecall
# holds the recall goal in go test).
#
#   scripts/bench-toolsearch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "goals: top-3 >= 90%; one search answer <= 600 tokens median; search p50 <= 1 ms over 1,000 tools"
TOOLSEARCH_REPORT=1 go test ./toolsearch -run '^TestReport$' -count 1 -v |
	grep -vE '^(=== RUN|--- PASS|PASS$|ok )'
