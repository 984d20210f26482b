package server

import (
	"net/http"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The decode stage: every message a client sends, in either era and on
// every transport, is held to strict keys ([wire.CheckMessage]) before
// anything reads it — the era check, the headers against the body,
// go-sdk. What a gateway in front authorized by exact name is then what
// runs.

// refuseKeys answers an HTTP body that [wire.CheckMessage] refuses (400,
// a JSON-RPC error naming the key) and reports whether it did.
func refuseKeys(w http.ResponseWriter, body []byte) bool {
	werr := wire.CheckMessage(body)
	if werr == nil {
		return false
	}
	writeJSON(w, werr.HTTPStatus(), errorResponse(messageID(body), werr))
	return true
}

// refuseKeysLine is [refuseKeys] for a stdio line: the error response to
// write (with its newline), nil when the line passes. A notification
// refused gets no answer (JSON-RPC answers none), but it is dropped all
// the same: dropped is true.
func refuseKeysLine(line []byte) (answer []byte, dropped bool) {
	werr := wire.CheckMessage(line)
	if werr == nil {
		return nil, false
	}
	id := messageID(line)
	if id == nil && line[0] == '{' {
		return nil, true
	}
	return append(errorResponse(id, werr), '\n'), true
}
