#!/usr/bin/env bash
# Records the reference (OpenAI tiktoken via ../../../shared/bench/tokref)
# token counts of every fixture here into counts.json, which the tokens
# package tests assert against. Rerun after adding or changing a fixture.
set -euo pipefail
cd "$(dirname "$0")"
tokref=${TOKREF:-../../../shared/bench/tokref}
files=$(ls | grep -v -e '^counts.json$' -e '^record.sh$' | sort)
{
  echo "{"
  first=1
  for enc in o200k_base cl100k_base; do
    # shellcheck disable=SC2086
    "$tokref" "$enc" $files | while read -r f tok _; do
      echo "$enc $f ${tok#tokens=}"
    done
  done | sort -k2,2 -k1,1 | awk '
    { if ($2 != prev) { if (prev != "") printf "},\n"; printf "  \"%s\": {", $2; sep="" } printf "%s\"%s\": %s", sep, $1, $3; sep=", "; prev=$2 }
    END { printf "}\n" }'
  echo "}"
} >counts.json
echo "wrote $(pwd)/counts.json"
