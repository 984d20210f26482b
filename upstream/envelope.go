package upstream

import (
	"encoding/json"
	"errors"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// errInvalidJSON is a message that is not one JSON object.
var errInvalidJSON = errors.New("not a valid JSON object")

// decodeMessage reads a JSON-RPC message's envelope without decoding
// what it carries: id, params, result and error data stay sub-slices of
// msg (no copy), and msg is validated once, by a scanner that neither
// unescapes nor allocates. A 100 MB result costs two byte scans here, not
// encoding/json's validation plus a copy.
func decodeMessage(msg []byte) (rpcMessage, error) {
	var m rpcMessage
	if len(msg) == 0 || !gjson.ValidBytes(msg) {
		return m, errInvalidJSON
	}
	// A string view of msg, not a copy: what is kept of it below is
	// re-sliced from msg or cloned.
	root := gjson.Parse(unsafe.String(unsafe.SliceData(msg), len(msg)))
	if !root.IsObject() {
		return m, errInvalidJSON
	}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		raw := rawOf(msg, v)
		switch k.Str {
		case "jsonrpc":
			m.JSONRPC = strings.Clone(v.String())
		case "id":
			m.ID = raw
		case "method":
			if v.Type != gjson.String {
				err = errors.New(`"method" is not a string`)
				return false
			}
			m.Method = strings.Clone(v.String())
		case "params":
			m.Params = raw
		case "result":
			m.Result = raw
		case "error":
			if v.Type == gjson.Null {
				return true
			}
			var e RPCError
			if err = json.Unmarshal(raw, &e); err != nil {
				return false
			}
			m.Error = &e
		}
		return true
	})
	return m, err
}

// rawOf is v's bytes as a sub-slice of msg (gjson's Raw is a string
// copy unless it can point into the input; Index says where it is).
func rawOf(msg []byte, v gjson.Result) json.RawMessage {
	if v.Index > 0 && v.Index+len(v.Raw) <= len(msg) {
		return json.RawMessage(msg[v.Index : v.Index+len(v.Raw) : v.Index+len(v.Raw)])
	}
	return json.RawMessage(v.Raw)
}
