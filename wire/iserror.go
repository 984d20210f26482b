package wire

import (
	"bytes"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// isErrorWhole is the size up to which [IsErrorResult] reads a result
// whole.
const isErrorWhole = 1 << 20

// isErrorEnds is how much of each end of a bigger result it reads.
const isErrorEnds = 4 << 10

// IsErrorResult reports whether a tools/call result (valid JSON) says
// isError: true at its top level. Only telemetry asks (an audit line's
// outcome, a span's status), on every call: a result over 1 MiB is not
// walked again for it, but read at its two ends, where an upstream
// writes its members besides a big content (a member there inside a
// nested object may be taken for the top level one, which telemetry can
// afford).
func IsErrorResult(raw []byte) bool {
	if len(raw) <= isErrorWhole {
		v, ok := jsonscan.Lookup(raw, "isError")
		return ok && string(v) == "true"
	}
	return errorMember(raw[:isErrorEnds]) || errorMember(raw[len(raw)-isErrorEnds:])
}

// errorMember reports whether b holds `"isError"`, optional white
// space, ':', optional white space, `true`.
func errorMember(b []byte) bool {
	const key = `"isError"`
	for {
		i := bytes.Index(b, []byte(key))
		if i < 0 {
			return false
		}
		j := jsonscan.SkipSpace(b, i+len(key))
		if j < len(b) && b[j] == ':' {
			j = jsonscan.SkipSpace(b, j+1)
			if bytes.HasPrefix(b[j:], []byte("true")) {
				return true
			}
		}
		b = b[i+len(key):]
	}
}
