# syntax=docker/dockerfile:1
# scratchpad-mcp as a static binary on distroless, non-root, serving
# streamable HTTP on :8931 with memory_dir on the /data volume.
#
#   docker build -t scratchpad-mcp .            (or: make docker)
#   docker run -p 8931:8931 -e SCRATCHPAD_TOKEN=$(openssl rand -hex 16) \
#     -v scratchpad-data:/data scratchpad-mcp
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/scratchpad-mcp ./cmd/scratchpad-mcp \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/scratchpad-mcp /usr/local/bin/scratchpad-mcp
COPY docker/scratchpad.toml /etc/scratchpad-mcp/scratchpad.toml
# The volume's mount point belongs to the non-root user (65532), so a new
# named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 8931
ENTRYPOINT ["/usr/local/bin/scratchpad-mcp"]
CMD ["serve", "--config", "/etc/scratchpad-mcp/scratchpad.toml", "--transport", "http", "--addr", "0.0.0.0:8931"]
