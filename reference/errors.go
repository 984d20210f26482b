package reference

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Sentinel errors, matched with [errors.Is] on what [Resolve] returns.
// Each is also an [*Error], the answer the model reads; the code it
// answers with is given in brackets.
var (
	// ErrInvalid: an object with a "$scratchpad" member is not a
	// reference as it must be written (one member; file required; path,
	// lines and as of their kinds; nothing else), or the call's options
	// are not ["invalid_reference"].
	ErrInvalid = errors.New("invalid reference")
	// ErrNotFound: the reference names no stored output of the calling
	// agent ["file_not_found"].
	ErrNotFound = errors.New("referenced file not found")
	// ErrOutside: the reference names a file outside the agent's read
	// root: another owner's, another run's, an absolute path
	// ["file_outside_root"].
	ErrOutside = errors.New("referenced file outside the read root")
	// ErrNothingSelected: the reference's path selects nothing
	// ["key_path_not_found", "nothing_selected"].
	ErrNothingSelected = errors.New("the reference selects nothing")
	// ErrTooLarge: what the call's references take is past the bound
	// ([Env].MaxBytes) ["too_large"].
	ErrTooLarge = errors.New("referenced data past the bound")
	// ErrDoesNotFit: the arguments, references replaced, do not fit the
	// tool's input schema ["reference_does_not_fit"].
	ErrDoesNotFit = errors.New("resolved arguments do not fit the tool's input schema")
	// ErrUnresolved: any other reason the reference cannot be replaced
	// (a path that does not parse, a file that is not JSON where JSON
	// is asked for, lines past its end, a read that failed); the code
	// is the exploration tools' for it.
	ErrUnresolved = errors.New("reference not resolved")
)

// Error is why a call's arguments could not be resolved, as the model
// reads it: one JSON object ([Error.JSON]) naming the reference and
// where it is, what went wrong, what there is instead and ready-to-run
// suggestions. Nothing was sent.
type Error struct {
	Code    string
	Message string
	// At is where the reference is in the arguments, a JSON Pointer
	// ("/content", "/rows/3"); "" for the arguments as a whole.
	At string
	// Reference is the reference as written; nil for the arguments as a
	// whole.
	Reference json.RawMessage
	// Detail is the exploration tools' answer for the same problem (its
	// members are merged into the JSON: what is there, suggestions).
	Detail json.RawMessage
	// Stored are stored outputs of the agent, those most like the
	// reference's file first, and StoredTotal how many there are.
	Stored      []string
	StoredTotal int
	// Problems say what does not fit the input schema.
	Problems []string
	// Corrected is the reference with the path the exploration tools
	// propose instead (a key's closest name, a repaired path), ready to
	// use; nil for none.
	Corrected json.RawMessage
	err       error
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap is the sentinel error.
func (e *Error) Unwrap() error { return e.err }

// JSON is the answer object: error, message, reference, at, then the
// exploration tools' fields, stored_outputs, problems, and suggestions
// last.
func (e *Error) JSON() []byte {
	o := object{{"error", e.Code}, {"message", e.Message}}
	if e.Reference != nil {
		o = append(o, member{"reference", e.Reference})
	}
	if e.At != "" {
		o = append(o, member{"at", e.At})
	}
	var sugg any
	if len(e.Detail) > 0 {
		ms, _ := members(e.Detail)
		for _, m := range ms {
			switch m.k {
			case "error", "message":
			case "suggestions":
				sugg = m.v
			default:
				o = append(o, m)
			}
		}
	}
	if e.Stored != nil || e.StoredTotal > 0 {
		o = append(o, member{"stored_outputs", e.Stored}, member{"stored_outputs_total", e.StoredTotal})
	}
	if len(e.Problems) > 0 {
		o = append(o, member{"problems", e.Problems})
	}
	if e.Corrected != nil {
		o = append(o, member{"corrected_reference", e.Corrected})
	}
	if sugg != nil {
		o = append(o, member{"suggestions", sugg})
	}
	b, err := o.MarshalJSON()
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": e.Code, "message": e.Message})
	}
	return b
}

// member and object build JSON objects whose key order is part of what
// the model reads (error first, suggestions last).
type member struct {
	k string
	v any
}

type object []member

func (o object) MarshalJSON() ([]byte, error) {
	return tool.MarshalOrdered(len(o), func(i int) (string, any) { return o[i].k, o[i].v })
}

// members are the members of a JSON object in order, values raw.
func members(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{k, v})
	}
	return out, nil
}
