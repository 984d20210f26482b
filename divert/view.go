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
	doc := unsafe.String(unsafe.SliceData(raw), len(raw))
	start := skipWS(doc, 0)
	if start >= len(doc) || doc[start] != '{' {
		return v, fmt.Errorf("%w: not a JSON object", ErrInvalidResult)
	}
	var (
		texts      []string
		media      bool
		badIsError error
		badContent error
	)
	walkObject(doc, start, func(k string, s int) int {
		switch k {
		case "isError":
			val := valueAt(doc, s)
			switch val.Type {
			case gjson.True, gjson.False:
				v.isError = val.Type == gjson.True
			case gjson.Null:
			default:
				badIsError = fmt.Errorf("%w: isError is not a boolean", ErrInvalidResult)
			}
			return s + len(val.Raw)
		case "content":
			// The last one counts, as when decoding.
			texts, media, badContent = nil, false, nil
			if doc[s] != '[' {
				val := valueAt(doc, s)
				if val.Type != gjson.Null {
					badContent = fmt.Errorf("%w: content is not an array", ErrInvalidResult)
				}
				return s + len(val.Raw)
			}
			done := false // at the first media block or bad block: the rest is skipped
			return walkArray(doc, s, func(s int) int {
				if done {
					return skipValue(doc, s)
				}
				if doc[s] != '{' {
					val := valueAt(doc, s)
					if val.Type != gjson.Null {
						badContent, done = fmt.Errorf("%w: a content block is not an object", ErrInvalidResult), true
					}
					return s + len(val.Raw)
				}
				var b block
				end := b.walk(doc, s)
				kind := gjson.Parse(b.typ.Raw).String()
				text, err := b.text(kind)
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
			end := skipValue(doc, s)
			if doc[s:end] != "null" {
				v.structured = raw[s:end:end]
			} else {
				v.structured = nil
			}
			return end
		}
		return skipValue(doc, s)
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

// block is what view keeps of one content block: its type, text and
// resource text, as raw JSON values (views of the result).
type block struct {
	typ, txt, resourceText gjson.Result
	resourceIsObject       bool
}

// walk reads the block (an object) at doc[s] and returns its end.
func (b *block) walk(doc string, s int) int {
	return walkObject(doc, s, func(k string, s int) int {
		switch k {
		case "type":
			b.typ = valueAt(doc, s)
			return s + len(b.typ.Raw)
		case "text":
			b.txt = valueAt(doc, s)
			return s + len(b.txt.Raw)
		case "resource":
			b.resourceText, b.resourceIsObject = gjson.Result{}, doc[s] == '{'
			if !b.resourceIsObject {
				return skipValue(doc, s)
			}
			return walkObject(doc, s, func(k string, s int) int {
				if k == "text" {
					b.resourceText = valueAt(doc, s)
					return s + len(b.resourceText.Raw)
				}
				return skipValue(doc, s)
			})
		}
		return skipValue(doc, s)
	})
}

// text is the text literal for the model of the block, whose type is kind
// ("" when the block has none to give), or why the block is not one MCP
// defines.
func (b *block) text(kind string) (string, error) {
	if b.typ.Exists() && b.typ.Type != gjson.Null && b.typ.Type != gjson.String {
		return "", fmt.Errorf("%w: a content block's type is not a string", ErrInvalidResult)
	}
	text := b.txt
	switch kind {
	case "text":
	case "resource":
		text = gjson.Result{}
		if b.resourceIsObject {
			text = b.resourceText
		}
	default:
		return "", nil
	}
	if text.Exists() && text.Type != gjson.Null {
		if text.Type != gjson.String {
			return "", fmt.Errorf("%w: a text is not a string", ErrInvalidResult)
		}
		return text.Raw, nil
	}
	if kind == "text" {
		return `""`, nil
	}
	return "", nil
}

// walkObject calls fn with each member's key (unescaped) and the offset of
// its value, for the object at t[i] (valid JSON); fn returns the offset
// just past the value, so that each value is walked once, by whoever
// reads it. walkObject returns the offset just past the object.
func walkObject(t string, i int, fn func(key string, at int) int) int {
	i = skipWS(t, i+1)
	for i < len(t) && t[i] == '"' {
		kEnd := stringEndStr(t, i)
		key := t[i+1 : max(i+1, kEnd-1)]
		if strings.IndexByte(key, '\\') >= 0 {
			key = gjson.Parse(t[i:kEnd]).String()
		}
		i = skipWS(t, skipWS(t, kEnd)+1) // past ':'
		if i >= len(t) {
			return len(t)
		}
		i = skipWS(t, fn(key, i))
		if i >= len(t) || t[i] != ',' {
			break
		}
		i = skipWS(t, i+1)
	}
	return min(i+1, len(t))
}

// walkArray is [walkObject] for the items of the array at t[i].
func walkArray(t string, i int, fn func(at int) int) int {
	i = skipWS(t, i+1)
	for i < len(t) && t[i] != ']' {
		i = skipWS(t, fn(i))
		if i >= len(t) || t[i] != ',' {
			break
		}
		i = skipWS(t, i+1)
	}
	return min(i+1, len(t))
}

// skipValue is the offset just past the value at t[i] (valid JSON).
func skipValue(t string, i int) int {
	switch t[i] {
	case '"':
		return stringEndStr(t, i)
	case '{', '[':
		return containerEnd(t, i)
	}
	return i + len(gjson.Parse(t[i:]).Raw)
}

// valueAt is the value at t[i] (valid JSON) with its type, as a raw view:
// strings and containers are not unescaped or parsed.
func valueAt(t string, i int) gjson.Result {
	switch t[i] {
	case '"':
		return gjson.Result{Type: gjson.String, Raw: t[i:stringEndStr(t, i)], Index: i}
	case '{', '[':
		return gjson.Result{Type: gjson.JSON, Raw: t[i:containerEnd(t, i)], Index: i}
	}
	r := gjson.Parse(t[i:])
	r.Index = i
	return r
}

// unescapeTo writes the value of the inside of a JSON string literal to
// out, stopping once it wrote stop bytes, and returns how many it wrote.
// The value is never longer than the literal, so out may be the literal's
// own memory (or start before it): no byte is written before it is read.
func unescapeTo(out, s []byte, stop int) int {
	w := 0
	plain := 0 // bytes since the last escape
	for i := 0; i < len(s) && w < stop; {
		if plain >= 16 {
			// A run without escapes (text, logs): moved whole up to the
			// next backslash (copy allows the overlap in place, where out
			// trails s). JSON held as text has an escape every few bytes
			// and stays on the byte loop, which is faster there.
			k := bytes.IndexByte(s[i:], '\\')
			if k < 0 {
				k = len(s) - i
			}
			k = min(k, stop-w, len(out)-w)
			w += copy(out[w:w+k], s[i:i+k])
			i += k
			plain = 0
			if i >= len(s) || w >= stop {
				break
			}
		}
		c := s[i]
		if c != '\\' {
			out[w] = c
			w++
			i++
			plain++
			continue
		}
		plain = 0
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
