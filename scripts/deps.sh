#!/usr/bin/env bash
# Installs what the tests need beyond Go modules. Idempotent and quiet when
# everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
go mod download
