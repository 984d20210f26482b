#!/usr/bin/env bash
# make release: what .goreleaser.yaml builds, with go build alone:
# dist/scratchpad-mcp_<version>_<os>_<arch>.tar.gz (.zip for windows) for
# linux, darwin and windows on amd64 and arm64, and dist/checksums.txt
# (sha256). VERSION and COMMIT default to git describe and the short hash;
# `scratchpad-mcp version` prints both.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
rm -rf dist
mkdir -p dist
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    name="scratchpad-mcp_${VERSION#v}_${os}_${arch}"
    dir="dist/$name"
    mkdir -p "$dir"
    exe=scratchpad-mcp
    [ "$os" = windows ] && exe=scratchpad-mcp.exe
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath \
      -ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT" \
      -o "$dir/$exe" ./cmd/scratchpad-mcp
    cp README.md "$dir/"
    mkdir -p "$dir/docs" && cp docs/*.md "$dir/docs/" # README links them
    if [ "$os" = windows ]; then
      (cd dist && zip -qr "$name.zip" "$name")
    else
      tar -C dist -czf "dist/$name.tar.gz" "$name"
    fi
    rm -rf "$dir"
    echo "dist/$name"
  done
done
(cd dist && sha256sum ./*.tar.gz ./*.zip | sed 's| \./| |' > checksums.txt)
echo "dist/checksums.txt"
