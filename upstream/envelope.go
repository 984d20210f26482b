package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// errInvalidJSON is a message that is not one JSON object.
var errInvalidJSON = errors.New("not a valid JSON object")

// decodeMessage reads a JSON-RPC message's envelope without decoding
// what it carries: id, params, result and error data stay sub-slices of
// msg (no copy), and msg is validated in the same single pass, by a
// scanner that neither unescapes, allocates nor recurses (a message
// nested past jsonscan.MaxDepth is refused, not walked into a stack
// overflow).
func decodeMessage(msg []byte) (rpcMessage, error) {
	members, serr := jsonscan.Members(msg)
	return decodeMembers(msg, members, serr)
}

// decodeMembers is decodeMessage given msg's members and verdict, from
// [jsonscan.Members] or a [jsonscan.Stream] that read msg as it arrived.
func decodeMembers(msg []byte, members []jsonscan.Member, serr error) (rpcMessage, error) {
	var m rpcMessage
	var (
		err    error
		errRaw json.RawMessage
	)
	if t := bytes.TrimLeft(msg, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return m, errInvalidJSON
	}
	for _, mb := range members {
		key, v := msg[mb.KeyStart:mb.KeyEnd], msg[mb.ValueStart:mb.ValueEnd:mb.ValueEnd]
		if bytes.IndexByte(key, '\\') >= 0 {
			// An escaped key ("res\u0075lt"): rare, so unescaped here.
			var k string
			if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
				continue
			}
			key = []byte(k)
		}
		raw := json.RawMessage(v)
		switch string(key) {
		case "jsonrpc":
			m.JSONRPC = stringOf(v)
		case "id":
			m.ID = raw
		case "method":
			if v[0] != '"' {
				err = errors.New(`"method" is not a string`)
				continue
			}
			m.Method = stringOf(v)
		case "params":
			m.Params = raw
		case "result":
			m.Result = raw
		case "error":
			errRaw = raw
		}
	}
	if serr != nil {
		// A response that went wrong inside its result or error, after
		// its id: the id is returned with the error (its call can fail
		// now, with the reason, rather than at its timeout).
		var partial rpcMessage
		var se *jsonscan.Error
		if errors.As(serr, &se) && (string(se.Member) == "result" || string(se.Member) == "error") && m.Method == "" {
			partial.ID = bytes.Clone(m.ID)
		}
		if errors.Is(serr, jsonscan.ErrTooDeep) {
			return partial, fmt.Errorf("%w: %w", errInvalidJSON, serr)
		}
		return partial, errInvalidJSON
	}
	if err != nil {
		return m, err
	}
	if errRaw != nil && string(errRaw) != "null" {
		var e RPCError
		if err := json.Unmarshal(errRaw, &e); err != nil {
			return m, err
		}
		m.Error = &e
	}
	return m, nil
}

// scanned is what a [jsonscan.Stream] found in a message as it arrived:
// its members and verdict, and the members of its result (offsets into
// the message) when that is an object, so that the result's type is
// known without walking it again.
type scanned struct {
	members  []jsonscan.Member
	err      error
	result   []jsonscan.Member
	resultOK bool
}

// messageStream is the validation of a message as it arrives.
func messageStream() *jsonscan.Stream { return &jsonscan.Stream{Inner: "result"} }

// closeScan ends s and says what it found.
func closeScan(s *jsonscan.Stream) *scanned {
	m, err := s.Close()
	r, ok := s.InnerMembers()
	return &scanned{members: m, err: err, result: r, resultOK: ok}
}

// decodeScanned is decodeMembers for a message a Stream read: the
// result's type is taken from the members it found.
func decodeScanned(msg []byte, sc *scanned) (rpcMessage, error) {
	m, err := decodeMembers(msg, sc.members, sc.err)
	if err == nil && m.Result != nil && sc.resultOK {
		m.resultType, m.typed = wire.ResultTypeOfMembers(msg, sc.result)
	}
	return m, err
}

// stringOf is a JSON value as text: a string unescaped, anything else as
// written.
func stringOf(v []byte) string {
	if v[0] == '"' {
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1])
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}
