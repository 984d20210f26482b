package divert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// modelView is what the model would read of a result (text contents,
// text of embedded resources, structuredContent) and what to store (the
// text, or the structured content when there is no text).
type modelView struct {
	visible, payload []byte
	divertable       bool // has something to store and no image or audio
	isError          bool
}

// view finds what the model would read in a tools/call result by scanning
// it (gjson), not decoding it: the text is unescaped once, straight into
// the one buffer it is stored from, and structuredContent stays a
// sub-slice of raw.
func view(raw json.RawMessage) (modelView, error) {
	var v modelView
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
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
	if len(texts) > 0 {
		size := len(texts) - 1
		for _, t := range texts {
			size += len(t.Raw)
		}
		buf := make([]byte, 0, size)
		for i, t := range texts {
			if i > 0 {
				buf = append(buf, '\n')
			}
			buf = appendUnescaped(buf, t.Raw)
		}
		v.payload = buf
	}
	v.visible = v.payload
	if sc := structured; sc.Exists() && sc.Type != gjson.Null {
		scRaw := raw[sc.Index : sc.Index+len(sc.Raw)]
		if len(v.visible) == 0 {
			v.payload = scRaw
			v.visible = scRaw
		} else {
			v.visible = append(append(append(make([]byte, 0, len(v.visible)+1+len(scRaw)), v.visible...), '\n'), scRaw...)
		}
	}
	v.divertable = len(v.payload) > 0
	return v, nil
}

// appendUnescaped appends the value of the valid JSON string literal lit
// (quotes included) to dst, as encoding/json decodes it: escapes
// resolved, lone surrogates and invalid UTF-8 as U+FFFD. Runs without a
// backslash are copied whole.
func appendUnescaped(dst []byte, lit string) []byte {
	s := lit[1 : len(lit)-1]
	start := len(dst)
	dst = slices.Grow(dst, len(s))
	out := dst[start : start+len(s)] // the value is never longer than its literal
	w := 0
	for i := 0; i < len(s); {
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
			w += utf8.EncodeRune(out[w:], r)
			continue
		}
		out[w] = c // and " \ /
		w++
	}
	dst = dst[:start+w]
	if out := dst[start:]; !utf8.Valid(out) {
		fixed := toValidUTF8(out)
		dst = append(dst[:start], fixed...)
	}
	return dst
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

func hex4(s string) rune {
	if len(s) < 4 {
		return utf8.RuneError
	}
	n, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	return rune(n)
}
