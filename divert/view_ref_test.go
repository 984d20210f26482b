package divert

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/tidwall/gjson"
)

// viewReference is view as it was before it walked the result in one
// pass (it walked the content's text three times): the reference the
// fuzz test holds view to.
func viewReference(raw json.RawMessage, valid bool) (modelView, error) {
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

// view reads what viewReference reads, of any valid JSON.
func FuzzViewIsReference(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"a"},{"type":"resource","resource":{"uri":"x","text":"b"}},{"type":"text"}]}`,
		`{"content":[],"structuredContent":{"k":1}}`,
		`{"content":[{"type":"text","text":"t"}],"structuredContent":{"k":1}}`,
		`{"content":[{"type":"text","text":"t"},{"type":"image","data":"x"}]}`,
		`{"content":[{"type":"text","text":"t"}],"isError":true}`,
		`{"content":{}}`, `{"content":[{"type":"text","text":1}]}`, `{"isError":"yes"}`, `[1]`, `{"content":[`,
		`{"content":[null,{"text":"x","type":"text"},{"type":"resource","resource":{"text":"r"}}],"content":[{"type":"text","text":"2"}]}`,
		` { "content" : [ { "type" : "text" , "text" : "a\"b" } ] , "isError" : null, "structuredContent": null } `,
		`{"\u0063ontent":[{"t\u0079pe":"t\u0065xt","text":"k"}]}`,
		`{"content":[{"type":"audio"},{"type":1}]}`, `{"content":[{"type":1},{"type":"audio"}]}`,
		`{"content":[1]}`, `{"content":null}`, `{"content":[{"type":"resource","text":"no","resource":[1]}]}`,
		`{"content":[{"type":"text","text":null},{"type":"other","text":"x"}],"x":[{"a":"]"}],"y":-1.5e3}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			// Bytes said to be valid that are not: read wrongly, but
			// without a panic.
			_, _ = view(json.RawMessage(s), true)
			return
		}
		for _, valid := range []bool{false, true} {
			got, gerr := view(json.RawMessage(s), valid)
			want, werr := viewReference(json.RawMessage(s), valid)
			if (gerr != nil) != (werr != nil) {
				t.Fatalf("%s: error %v, reference %v", s, gerr, werr)
			}
			if gerr != nil {
				continue
			}
			if got.isError != want.isError || got.divertable != want.divertable || !slices.Equal(got.texts, want.texts) ||
				string(got.structured) != string(want.structured) {
				t.Fatalf("%s:\n got %s\nwant %s", s, describeView(got), describeView(want))
			}
		}
	})
}

func describeView(v modelView) string {
	return fmt.Sprintf("isError %v divertable %v texts %q structured %q", v.isError, v.divertable, v.texts, v.structured)
}
