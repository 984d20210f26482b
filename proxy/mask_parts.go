package proxy

import (
	"encoding/json"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// A result's text comes in items (a tool result's content, a resource's
// contents, a prompt's messages) that a client shows one after the
// other: a secret cut across two items is whole to the model though no
// item holds it ([redact.Redactor.Parts]). maskAcross masks such secrets
// in a result the JSON scan already passed.

// textSpan is one item's "text" string literal: raw[start:end], quotes
// included.
type textSpan struct{ start, end int }

// textItems are the text literals of raw's items, in order: content[].text,
// contents[].text, messages[].content.text.
func textItems(raw []byte) []textSpan {
	var spans []textSpan
	i := jsonscan.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	// Each byte is walked once: a value's end is found by whoever reads
	// it (a result's one text may be hundreds of megabytes).
	textOf := func(at int) int { // at: an item object; returns its end
		return jsonscan.Object(raw, at, func(ks, ke, vat int) int {
			end := jsonscan.ValueEnd(raw, vat)
			if string(raw[ks:ke]) == `"text"` && raw[vat] == '"' {
				spans = append(spans, textSpan{vat, end})
			}
			return end
		})
	}
	jsonscan.Object(raw, i, func(ks, ke, vat int) int {
		key := string(raw[ks:ke])
		if (key != `"content"` && key != `"contents"` && key != `"messages"`) || raw[vat] != '[' {
			return jsonscan.ValueEnd(raw, vat)
		}
		return jsonscan.Array(raw, vat, func(at int) int {
			if raw[at] != '{' {
				return jsonscan.ValueEnd(raw, at)
			}
			if key != `"messages"` {
				return textOf(at)
			}
			return jsonscan.Object(raw, at, func(ks, ke, vat int) int {
				if string(raw[ks:ke]) == `"content"` && raw[vat] == '{' {
					return textOf(vat)
				}
				return jsonscan.ValueEnd(raw, vat)
			})
		})
	})
	return spans
}

// maskAcross is raw (a valid result object) with the secrets crossing
// its text items masked (mask mode) and what was found; raw itself when
// there are fewer than two text items or nothing crosses.
func maskAcross(red *redact.Redactor, raw json.RawMessage) (json.RawMessage, redact.Report, error) {
	spans := textItems(raw)
	if len(spans) < 2 {
		return raw, redact.Report{}, nil
	}
	parts := make([][]byte, len(spans))
	for i, s := range spans {
		parts[i] = []byte(jsonscan.Unquote(raw[s.start:s.end]))
	}
	out, rep, err := red.Parts(parts)
	if err != nil || rep.Total == 0 || red.Mode() != redact.Mask {
		return raw, rep, err
	}
	b := make([]byte, 0, len(raw))
	at := 0
	for i, s := range spans {
		b = append(b, raw[at:s.start]...)
		if string(out[i]) == string(parts[i]) {
			b = append(b, raw[s.start:s.end]...)
		} else {
			q, _ := json.Marshal(string(out[i]))
			b = append(b, q...)
		}
		at = s.end
	}
	return append(b, raw[at:]...), rep, nil
}
