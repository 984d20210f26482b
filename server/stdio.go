package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// go-sdk's stdio transport ends the session at the first line it cannot
// decode (not JSON, or not JSON-RPC 2.0): one bad line would cost an
// agent every tool. stdioFilter answers such a line with a JSON-RPC
// error itself, as JSON-RPC asks, and passes the others on to go-sdk.

// stdioFilter returns what go-sdk reads: the lines of in that decode as
// JSON-RPC messages, their request ids made ones go-sdk answers as sent
// (ids.go), a batch line split into its messages (its responses are
// joined again, rawwire.go); the others, and lines longer than max bytes,
// are answered on out. take, when not nil, is offered each line first:
// what it takes (2026-07-28 messages, rev20260728_stdio.go) go-sdk never sees.
// At the end of in, drain (when not nil) is called before go-sdk reads
// its end: the requests read so far are answered first (`serve <
// requests.jsonl` answers every line). A read error other than the end
// calls gone instead. Close it to stop filtering.
func stdioFilter(in io.Reader, out io.Writer, max int, ids *callIDs, take func(line []byte) (answer []byte, taken bool), drain func(), gone func()) *io.PipeReader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(in)
		version := "" // what the client's initialize asked for
		for {
			line, tooLong, err := readLine(br, max)
			if t := bytes.TrimSpace(line); len(t) > 0 || tooLong {
				if v := initializeVersion(t); v != "" {
					version = v
				}
				var answer, pass []byte
				taken := false
				if !tooLong {
					answer, taken = refuseKeysLine(t)
				}
				if take != nil && !tooLong && !taken {
					answer, taken = take(t)
				}
				if !taken {
					answer, pass = admitLine(t, tooLong, ids, version)
				}
				if answer != nil {
					if _, werr := out.Write(answer); werr != nil {
						pr.CloseWithError(werr)
						return
					}
				}
				if len(pass) > 0 {
					if _, werr := pw.Write(pass); werr != nil {
						return // go-sdk stopped reading
					}
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) && drain != nil {
					drain()
				} else if gone != nil {
					gone()
				}
				pw.CloseWithError(err) // io.EOF reads as a plain EOF
				return
			}
		}
	}()
	return pr
}

// noBatches is the first protocol version without JSON-RPC batches.
const noBatches = "2025-06-18"

// initializeVersion is the protocolVersion an initialize request line
// asks for, or "".
func initializeVersion(line []byte) string {
	if !bytes.Contains(line, []byte(`"initialize"`)) {
		return "" // the common case, without decoding
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return ""
	}
	return m.Params.ProtocolVersion
}

// admitLine returns the answer to a line go-sdk must not see, or the
// lines to hand it instead.
func admitLine(line []byte, tooLong bool, ids *callIDs, version string) (answer, pass []byte) {
	var in []inMsg
	var batch *batchReply
	switch {
	case tooLong || !json.Valid(line):
		return refuse(line, tooLong), nil
	case line[0] == '[' && version >= noBatches:
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": jsonrpc.CodeInvalidRequest, "message": "Invalid Request: JSON-RPC batching is not supported in protocol " + noBatches + " and later (this session: " + version + "); send one message per line"}})
		return append(b, '\n'), nil
	case line[0] == '[':
		if answer := refuseBatch(line); answer != nil {
			return answer, nil
		}
		var elems []json.RawMessage
		_ = json.Unmarshal(line, &elems) // refuseBatch decoded each
		batch = &batchReply{}
		for _, e := range elems {
			m, _ := jsonrpc.DecodeMessage(e)
			in = append(in, inMsg{m, messageID(e)})
		}
	default:
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return refuse(line, false), nil
		}
		in = []inMsg{{m, messageID(line)}}
	}
	ps, err := ids.inbound(in, batch)
	var ie *idError
	if errors.As(err, &ie) {
		if batch == nil {
			return append(ie.response(), '\n'), nil
		}
		return refuseBatchIDs(line, ie), nil
	}
	if len(ps) == 1 && batch == nil && !ps[0].changed {
		return nil, append(line, '\n') // as it came, not copied
	}
	for _, p := range ps {
		data := line
		if batch != nil || p.changed {
			var err error
			if data, err = jsonrpc.EncodeMessage(p.msg); err != nil {
				continue // unreachable: go-sdk decoded it
			}
		}
		pass = append(append(pass, data...), '\n')
	}
	return nil, pass
}

// refuseBatchIDs answers a batch refused for a request id (null, or in
// flight): the batch is not run, each request is answered Invalid
// Request, the one with the id saying why.
func refuseBatchIDs(line []byte, why *idError) []byte {
	var elems []json.RawMessage
	_ = json.Unmarshal(line, &elems)
	out := []json.RawMessage{}
	for _, e := range elems {
		id := messageID(e)
		var probe struct {
			Method *string `json:"method"`
		}
		if id == nil || json.Unmarshal(e, &probe) != nil || probe.Method == nil {
			continue // a notification or a response: nothing to answer
		}
		if bytes.Equal(id, why.id) {
			out = append(out, why.response())
			continue
		}
		out = append(out, refuseOne(e, jsonrpc.CodeInvalidRequest, "Invalid Request: the batch holds a request with a null or in-flight id; none of it was run"))
	}
	b, _ := json.Marshal(out)
	return append(b, '\n')
}

// readLine reads one line; one longer than max is discarded to its end
// and reported as tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
}

// refuse returns the error response to a line go-sdk could not decode,
// or nil to pass it on.
func refuse(line []byte, tooLong bool) []byte {
	code, message := int64(0), ""
	switch {
	case tooLong:
		code, message = jsonrpc.CodeInvalidRequest, "Invalid Request: message longer than the line limit"
	case !json.Valid(line):
		code, message = jsonrpc.CodeParseError, "Parse error"
	case line[0] == '[':
		return refuseBatch(line)
	default:
		_, err := jsonrpc.DecodeMessage(line)
		if err == nil {
			return nil
		}
		code, message = jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error()
	}
	b := refuseOne(line, code, message)
	if b == nil {
		return nil
	}
	return append(b, '\n')
}

// refuseOne is the error response with code and message to the message
// msg, under its id when it has one of a valid type.
func refuseOne(msg []byte, code int64, message string) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	id := json.RawMessage("null")
	if json.Unmarshal(msg, &probe) == nil && len(probe.ID) > 0 && (probe.ID[0] == '"' || probe.ID[0] == '-' || (probe.ID[0] >= '0' && probe.ID[0] <= '9')) {
		id = probe.ID
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	if err != nil {
		return nil
	}
	return b
}

// refuseBatch answers a batch line that go-sdk could not take (it ends the
// session at one): an empty batch with one Invalid Request error, as
// JSON-RPC 2.0 asks; a batch with elements that are not JSON-RPC messages
// with an array holding an error for each of them (the valid ones are not
// run: the batch is refused whole). nil passes a batch of valid messages
// on.
func refuseBatch(line []byte) []byte {
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": jsonrpc.CodeInvalidRequest, "message": "Invalid Request: an empty batch"}})
		return append(b, '\n')
	}
	bad := false
	for _, e := range elems {
		if _, err := jsonrpc.DecodeMessage(e); err != nil {
			bad = true
			break
		}
	}
	if !bad {
		return nil
	}
	out := make([]json.RawMessage, 0, len(elems))
	for _, e := range elems {
		code, message := int64(jsonrpc.CodeInvalidRequest), "Invalid Request: the batch holds a message that is not JSON-RPC 2.0; none of it was run"
		if _, err := jsonrpc.DecodeMessage(e); err != nil {
			message = "Invalid Request: " + err.Error()
		}
		r := refuseOne(e, code, message)
		out = append(out, r)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return append(b, '\n')
}
