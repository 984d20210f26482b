package divert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
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
}

// textOnly reports whether the output stored is the text blocks (else it
// is the structured content).
func (v *modelView) textOnly() bool {
	return len(v.texts) > 1 || len(v.texts) == 1 && len(v.texts[0]) > 2 || v.structured == nil
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
		w += unescapeTo(buf[w:], in[1:len(in)-1], limit-w)
	}
	out = buf[:w]
	if !utf8.Valid(out) {
		out = toValidUTF8(out)
	}
	return out
}

// view finds what the model would read in a tools/call result by scanning
// it (gjson), not decoding it: the text is unescaped once, straight into
// the one buffer it is stored from, and structuredContent stays a
// sub-slice of raw. valid says raw is known to be valid JSON (the
// upstream client validated the message it is part of): not scanned
// again for that.
func view(raw json.RawMessage, valid bool) (modelView, error) {
	var v modelView
	if len(raw) == 0 || !valid && !gjson.ValidBytes(raw) {
		return v, fmt.Errorf("%w: not valid JSON", ErrInvalidResult)
	}
	doc := unsafe.String(unsafe.SliceData(raw), len(raw))
	res := gjson.Parse(doc)
	if !res.IsObject() {
		return v, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	// One walk over the top-level members; the content's text is skipped
	// by byte search, never parsed or copied here.
	var content, structured gjson.Result
	var bad error
	members(doc, nil, res, func(k string, val gjson.Result) bool {
		switch k {
		case "isError":
			switch val.Type {
			case gjson.True, gjson.False:
				v.isError = val.Type == gjson.True
			case gjson.Null:
			default:
				bad = fmt.Errorf("%w: isError is not a boolean", ErrInvalidResult)
			}
		case "content":
			content = val
		case "structuredContent":
			structured = val
		}
		return true
	})
	if bad != nil {
		return v, bad
	}
	if content.Exists() && content.Type != gjson.Null && !content.IsArray() {
		return v, fmt.Errorf("%w: content is not an array", ErrInvalidResult)
	}
	var texts []gjson.Result
	media := false
	elements(content, func(c gjson.Result) bool {
		if c.Type == gjson.Null {
			return true
		}
		if !c.IsObject() {
			bad = fmt.Errorf("%w: a content block is not an object", ErrInvalidResult)
			return false
		}
		var typ, text, resource gjson.Result
		members(c.Raw, nil, c, func(k string, val gjson.Result) bool {
			switch k {
			case "type":
				typ = val
			case "text":
				text = val
			case "resource":
				resource = val
			}
			return true
		})
		if typ.Exists() && typ.Type != gjson.Null && typ.Type != gjson.String {
			bad = fmt.Errorf("%w: a content block's type is not a string", ErrInvalidResult)
			return false
		}
		kind := gjson.Parse(typ.Raw).String()
		switch kind {
		case "text":
		case "resource":
			text = gjson.Result{}
			if resource.IsObject() {
				members(resource.Raw, nil, resource, func(k string, val gjson.Result) bool {
					if k == "text" {
						text = val
					}
					return true
				})
			}
		case "image", "audio":
			media = true
			return false
		default:
			return true
		}
		if text.Exists() && text.Type != gjson.Null {
			if text.Type != gjson.String {
				bad = fmt.Errorf("%w: a text is not a string", ErrInvalidResult)
				return false
			}
			texts = append(texts, text)
		} else if kind == "text" {
			texts = append(texts, gjson.Result{Type: gjson.String, Raw: `""`})
		}
		return true
	})
	if bad != nil {
		return v, bad
	}
	if media {
		return v, nil
	}
	v.raw = raw
	for _, t := range texts {
		v.texts = append(v.texts, t.Raw)
	}
	if sc := structured; sc.Exists() && sc.Type != gjson.Null {
		v.structured = raw[sc.Index : sc.Index+len(sc.Raw)]
	}
	v.divertable = len(v.texts) > 1 || len(v.texts) == 1 && len(v.texts[0]) > 2 || v.structured != nil
	return v, nil
}

// unescapeTo writes the value of the inside of a JSON string literal to
// out, stopping once it wrote stop bytes, and returns how many it wrote.
// The value is never longer than the literal, so out may be the literal's
// own memory (or start before it): no byte is written before it is read.
func unescapeTo(out, s []byte, stop int) int {
	w := 0
	for i := 0; i < len(s) && w < stop; {
		c := s[i]
		if c != '\\' {
			out[w] = c
			w++
			i++
			continue
		}
		if i+1 >= len(s) {
			break
		}
		c = s[i+1]
		i += 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r := hex4(s[i:])
			i = min(i+4, len(s))
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = utf16.DecodeRune(r, hex4(s[i+2:]))
				}
				if r2 != utf8.RuneError {
					i += 6
				}
				r = r2
			}
			var enc [4]byte
			n := utf8.EncodeRune(enc[:], r)
			w += copy(out[w:], enc[:n])
			continue
		}
		out[w] = c // and " \\ /
		w++
	}
	return min(w, stop)
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

func hex4(s []byte) rune {
	if len(s) < 4 {
		return utf8.RuneError
	}
	n, err := strconv.ParseUint(string(s[:4]), 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	return rune(n)
}
