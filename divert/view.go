package divert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// modelView is what the model would read of a result (text contents,
// text of embedded resources, structuredContent) and what to store (the
// text, or the structured content when there is no text). The text is
// found, not yet unescaped: [modelView.text] does that once it is known
// to be needed, into a buffer of its own or over the result's own bytes.
type modelView struct {
	raw        []byte
	texts      []string // the text blocks' JSON string literals, views of raw
	structured []byte   // structuredContent, a sub-slice of raw; nil when absent or null
	divertable bool     // has something to store and no image or audio
	isError    bool
	// preferStructured: the client shows the model structuredContent when
	// there is some (result_view = "structured").
	preferStructured bool
}

// textOnly reports whether what the model reads, and what is counted and
// stored, is the text blocks (else it is the structured content): the text
// when there is any, the structured content only when there is none; or,
// for a client that shows the structured form, the structured content
// whenever there is some.
func (v *modelView) textOnly() bool {
	if v.structured == nil {
		return true
	}
	if v.preferStructured {
		return false
	}
	return len(v.texts) > 1 || len(v.texts) == 1 && len(v.texts[0]) > 2
}

// textBound is the most bytes the joined text can have.
func (v *modelView) textBound() int {
	n := max(0, len(v.texts)-1)
	for _, t := range v.texts {
		n += len(t) - 2
	}
	return n
}

// text is the text blocks joined with newlines, unescaped: at most limit
// bytes of it (limit < 0: all). inPlace writes it over the result's own
// bytes, from the first block on (the result is then no longer valid
// JSON); a prefix is always a new buffer.
func (v *modelView) text(limit int, inPlace bool) []byte {
	bound := v.textBound()
	if limit < 0 || limit > bound {
		limit = bound
	}
	var out []byte
	if inPlace && len(v.texts) > 0 && limit == bound {
		first := int(uintptr(unsafe.Pointer(unsafe.StringData(v.texts[0]))) - uintptr(unsafe.Pointer(unsafe.SliceData(v.raw))))
		if first >= 0 && first < len(v.raw) {
			out = v.raw[first:first]
		}
	}
	if out == nil {
		out = make([]byte, 0, limit)
	}
	w := 0
	buf := out[:cap(out)]
	for i, lit := range v.texts {
		if w >= limit {
			break
		}
		if i > 0 {
			buf[w] = '\n'
			w++
		}
		in := unsafe.Slice(unsafe.StringData(lit), len(lit))
		w += jsonscan.Unescape(buf[w:], in[1:len(in)-1], limit-w)
	}
	out = buf[:w]
	if !utf8.Valid(out) {
		out = toValidUTF8(out)
	}
	return out
}

// view finds what the model would read in a tools/call result by scanning
// it, not decoding it, in one pass: the text of a 100 MB result is walked
// once here (to find its end), unescaped once later, straight into the one
// buffer it is stored from, and structuredContent stays a sub-slice of
// raw. valid says raw is known to be valid JSON (the upstream client
// validated the message it is part of): not scanned again for that.
func view(raw json.RawMessage, valid bool) (modelView, error) {
	var v modelView
	if len(raw) == 0 || !valid && !jsonscan.Valid(raw) {
		return v, fmt.Errorf("%w: not valid JSON", ErrInvalidResult)
	}
	b := []byte(raw)
	start := jsonscan.SkipSpace(b, 0)
	if start >= len(b) || b[start] != '{' {
		return v, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	var (
		texts      []string
		media      bool
		badIsError error
		badContent error
	)
	jsonscan.Object(b, start, func(ks, ke, s int) int {
		switch memberKey(b, ks, ke) {
		case "isError":
			val := valueAt(b, s)
			switch {
			case val.is(b, "true"), val.is(b, "false"):
				v.isError = val.is(b, "true")
			case val.is(b, "null"):
			default:
				badIsError = fmt.Errorf("%w: isError is not a boolean", ErrInvalidResult)
			}
			return val.e
		case "content":
			// The last one counts, as when decoding.
			texts, media, badContent = nil, false, nil
			if b[s] != '[' {
				val := valueAt(b, s)
				if !val.is(b, "null") {
					badContent = fmt.Errorf("%w: content is not an array", ErrInvalidResult)
				}
				return val.e
			}
			done := false // at the first media block or bad block: the rest is skipped
			return jsonscan.Array(b, s, func(s int) int {
				if done {
					return jsonscan.ValueEnd(b, s)
				}
				if b[s] != '{' {
					val := valueAt(b, s)
					if !val.is(b, "null") {
						badContent, done = fmt.Errorf("%w: a content block is not an object", ErrInvalidResult), true
					}
					return val.e
				}
				var bl block
				end := bl.walk(b, s)
				kind := ""
				if bl.typ.isString(b) {
					kind = jsonscan.Unquote(b[bl.typ.s:bl.typ.e])
				}
				text, err := bl.text(b, kind)
				switch {
				case err != nil:
					badContent, done = err, true
				case kind == "image" || kind == "audio":
					media, done = true, true
				case text != "":
					texts = append(texts, text)
				}
				return end
			})
		case "structuredContent":
			end := jsonscan.ValueEnd(b, s)
			if string(b[s:end]) != "null" {
				v.structured = raw[s:end:end]
			} else {
				v.structured = nil
			}
			return end
		}
		return jsonscan.ValueEnd(b, s)
	})
	if badIsError != nil {
		return v, badIsError
	}
	if badContent != nil {
		return v, badContent
	}
	if media {
		return modelView{isError: v.isError}, nil
	}
	v.raw = raw
	v.texts = texts
	v.divertable = len(v.texts) > 1 || len(v.texts) == 1 && len(v.texts[0]) > 2 || v.structured != nil
	return v, nil
}

// rawValue is the value b[s:e] of a result, a view: not unescaped or
// parsed. The zero value is an absent one.
type rawValue struct{ s, e int }

// valueAt is the value at b[i] (valid JSON).
func valueAt(b []byte, i int) rawValue { return rawValue{i, jsonscan.ValueEnd(b, i)} }

func (v rawValue) exists() bool                 { return v.e > v.s }
func (v rawValue) is(b []byte, lit string) bool { return string(b[v.s:v.e]) == lit }
func (v rawValue) isString(b []byte) bool       { return v.exists() && b[v.s] == '"' }

// memberKey is the key b[ks:ke] (quotes included), unescaped; a key
// without escapes is a view of b, kept no longer than the call.
func memberKey(b []byte, ks, ke int) string {
	in := b[ks+1 : max(ks+1, ke-1)]
	if bytes.IndexByte(in, '\\') < 0 {
		return unsafe.String(unsafe.SliceData(in), len(in))
	}
	return jsonscan.Unquote(b[ks:ke])
}

// block is what view keeps of one content block: its type, text and
// resource text, as raw values (views of the result).
type block struct {
	typ, txt, resourceText rawValue
	resourceIsObject       bool
}

// walk reads the block (an object) at b[s] and returns its end.
func (bl *block) walk(b []byte, s int) int {
	return jsonscan.Object(b, s, func(ks, ke, s int) int {
		switch memberKey(b, ks, ke) {
		case "type":
			bl.typ = valueAt(b, s)
			return bl.typ.e
		case "text":
			bl.txt = valueAt(b, s)
			return bl.txt.e
		case "resource":
			bl.resourceText, bl.resourceIsObject = rawValue{}, b[s] == '{'
			if !bl.resourceIsObject {
				return jsonscan.ValueEnd(b, s)
			}
			return jsonscan.Object(b, s, func(ks, ke, s int) int {
				if memberKey(b, ks, ke) == "text" {
					bl.resourceText = valueAt(b, s)
					return bl.resourceText.e
				}
				return jsonscan.ValueEnd(b, s)
			})
		}
		return jsonscan.ValueEnd(b, s)
	})
}

// text is the text literal for the model of the block (a view of b),
// whose type is kind ("" when the block has none to give), or why the
// block is not one MCP defines.
func (bl *block) text(b []byte, kind string) (string, error) {
	if bl.typ.exists() && !bl.typ.is(b, "null") && !bl.typ.isString(b) {
		return "", fmt.Errorf("%w: a content block's type is not a string", ErrInvalidResult)
	}
	text := bl.txt
	switch kind {
	case "text":
	case "resource":
		text = rawValue{}
		if bl.resourceIsObject {
			text = bl.resourceText
		}
	default:
		return "", nil
	}
	if text.exists() && !text.is(b, "null") {
		if !text.isString(b) {
			return "", fmt.Errorf("%w: a text is not a string", ErrInvalidResult)
		}
		return unsafe.String(&b[text.s], text.e-text.s), nil
	}
	if kind == "text" {
		return `""`, nil
	}
	return "", nil
}

// toValidUTF8 replaces each invalid byte with U+FFFD, as encoding/json
// does.
func toValidUTF8(b []byte) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out.WriteString("\uFFFD")
		} else {
			out.Write(b[:n])
		}
		b = b[n:]
	}
	return out.Bytes()
}
