# scratchpad-mcp — build, test, benchmark.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)

.PHONY: all build test lint cross test-short vet bench bench-deps deps clean release docker soak npm mcpb

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/scratchpad-mcp ./cmd/scratchpad-mcp

deps:
	./scripts/deps.sh

# The README's test command. CI (.ci/run) calls exactly this.
test: deps lint cross
	$(GO) test -race -count=1 -timeout 30m ./...

# vet, gofmt and staticcheck (installed by deps; mcp-go's deprecations are
# off only where staticcheck.conf says).
lint:
	$(GO) vet ./...
	$(GO) vet -tags bench ./... # the benchmarks of make bench compile too
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	"$$($(GO) env GOPATH)/bin/staticcheck" ./...

# The whole module builds for every system a release targets (process
# handling differs per system: upstream/proc_*.go).
cross:
	@for os in linux darwin windows; do for arch in amd64 arm64; do \
		echo "GOOS=$$os GOARCH=$$arch go build ./..."; \
		GOOS=$$os GOARCH=$$arch $(GO) build ./... || exit 1; \
	done; done
	@# The tests compile on every system too (a Unix-only syscall in a test
	@# breaks Windows' test build, which go build never sees).
	@for os in darwin windows; do \
		echo "GOOS=$$os go vet ./..."; \
		GOOS=$$os GOARCH=amd64 $(GO) vet ./... || exit 1; \
	done

# Soak (not in CI; loopback only, bounded): 8 HTTP clients, 3 upstreams,
# one SIGKILLed every 30 s, next to a hostile mix (stalled readers, refused
# sockets, a session flood to the cap, cancelled slow greps, greps whose
# client hangs up, a grep context of 10^8 and a megabyte field list, and a
# second proxy with bearer tokens where two owners call a shared upstream
# while unauthenticated sockets flood max_connections, one owner floods
# 2026-07-28 parked calls past its bound while the other's questions are
# answered, and bodies smuggling a name past Mcp-Name are refused), for
# SOAK_DURATION (default 10m). Prints calls/s,
# p50/p99, errors by kind, RSS and goroutines at start and end, and fails
# when they grow beyond the bounds scripts/soak states.
SOAK_DURATION ?= 10m
soak: build
	$(GO) build -o bin/soak ./scripts/soak
	./bin/soak -bin bin/scratchpad-mcp -duration $(SOAK_DURATION)

# Release archives for the six targets with checksums (go build; the
# same as .goreleaser.yaml builds).
release:
	VERSION=$(VERSION) COMMIT=$(COMMIT) ./scripts/release.sh

# npm packages (dist/npm/): scratchpad-mcp, a launcher, and one package
# per platform holding its binary, as npm pack tarballs; so that
# `npx -y scratchpad-mcp serve` works once they are published.
# TARGETS=linux/amd64 (GOOS/GOARCH, comma-separated) builds fewer.
TARGETS ?=
npm:
	$(GO) run ./scripts/dist npm -version $(VERSION) -commit $(COMMIT) -targets '$(TARGETS)'

# MCP Bundles (dist/mcpb/*.mcpb), one per platform, packed and validated
# by the pinned mcpb CLI (scripts/dist/package-lock.json), and
# dist/mcpb/server.json for the MCP registry with their SHA-256.
mcpb:
	./scripts/npmci.sh scripts/dist
	$(GO) run ./scripts/dist mcpb -version $(VERSION) -commit $(COMMIT) -targets '$(TARGETS)'

# The container image, when Docker and its daemon are there; skipped
# otherwise.
docker:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
		docker build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t scratchpad-mcp:$(VERSION) -t scratchpad-mcp:latest . ; \
	else \
		echo "make docker: no Docker daemon here: skipped"; \
	fi

test-short:
	$(GO) test -short -count=1 ./...

# Side-by-side references: jq and GNU grep (Debian packages), tiktoken via
# ../shared/bench/tokref (installs its npm packages itself); redis-server
# and haproxy for bench-replicas.sh.
bench-deps:
	@command -v jq >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq jq; }
	@command -v grep >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq grep; }
	@command -v redis-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq redis-server; }
	@command -v haproxy >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq haproxy; }
	@command -v curl >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq curl; }

bench: build bench-deps
	./scripts/bench.sh

clean:
	rm -rf bin dist
