package divert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
	res := gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
	if !res.IsObject() {
		return v, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	if ie := res.Get("isError"); ie.Exists() && ie.Type != gjson.Null {
		if ie.Type != gjson.True && ie.Type != gjson.False {
			return v, fmt.Errorf("%w: isError is not a boolean", ErrInvalidResult)
		}
		v.isError = ie.Type == gjson.True
	}
	content := res.Get("content")
	if content.Exists() && content.Type != gjson.Null && !content.IsArray() {
		return v, fmt.Errorf("%w: content is not an array", ErrInvalidResult)
	}
	var texts []gjson.Result
	var bad error
	media := false
	content.ForEach(func(_, c gjson.Result) bool {
		if c.Type == gjson.Null {
			return true
		}
		if !c.IsObject() {
			bad = fmt.Errorf("%w: a content block is not an object", ErrInvalidResult)
			return false
		}
		typ := c.Get("type")
		if typ.Exists() && typ.Type != gjson.Null && typ.Type != gjson.String {
			bad = fmt.Errorf("%w: a content block's type is not a string", ErrInvalidResult)
			return false
		}
		var text gjson.Result
		switch typ.Str {
		case "text":
			text = c.Get("text")
		case "resource":
			if r := c.Get("resource"); r.IsObject() {
				text = r.Get("text")
			}
		case "image", "audio":
			media = true
			return false
		}
		if text.Exists() && text.Type != gjson.Null {
			if text.Type != gjson.String {
				bad = fmt.Errorf("%w: a text is not a string", ErrInvalidResult)
				return false
			}
			texts = append(texts, text)
		} else if typ.Str == "text" {
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
	if sc := res.Get("structuredContent"); sc.Exists() && sc.Type != gjson.Null {
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
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			dst = append(dst, s...)
			break
		}
		dst = append(dst, s[:i]...)
		s = s[i+1:]
		if s == "" {
			break
		}
		c := s[0]
		s = s[1:]
		switch c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s)
			s = s[min(4, len(s)):]
			if utf16.IsSurrogate(r) {
				if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(s[2:])); r2 != utf8.RuneError {
						r = r2
						s = s[6:]
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // " \ /
			dst = append(dst, c)
		}
	}
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
