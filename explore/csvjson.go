package explore

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// csvView returns a CSV or TSV file as a JSON array with one object per
// row, keyed by the header row, so that the JSON path tools, filters and
// count_by work on its rows. Cells that are JSON numbers become numbers,
// true/false booleans, empty cells null, everything else strings; cells
// past the header are keyed _col<N> (1-based). Built once per loaded file.
func (d *doc) csvView() *doc {
	d.csvOnce.Do(func() {
		var b bytes.Buffer
		r := csv.NewReader(bytes.NewReader(d.data))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		r.ReuseRecord = true
		if d.kind == kindTSV {
			r.Comma = '\t'
		}
		var keys [][]byte
		b.WriteByte('[')
		rows := 0
		for {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				var pe *csv.ParseError
				if errors.As(err, &pe) {
					continue
				}
				break
			}
			if keys == nil {
				seen := map[string]int{}
				for _, h := range rec {
					h = strings.TrimSpace(h)
					if seen[h]++; seen[h] > 1 {
						h += "_" + strconv.Itoa(seen[h])
					}
					k, _ := tool.MarshalNoEscape(h)
					keys = append(keys, k)
				}
				continue
			}
			if rows > 0 {
				b.WriteByte(',')
			}
			rows++
			b.WriteByte('{')
			for i := range max(len(rec), len(keys)) {
				if i > 0 {
					b.WriteByte(',')
				}
				if i < len(keys) {
					b.Write(keys[i])
				} else {
					b.WriteString(`"_col` + strconv.Itoa(i+1) + `"`)
				}
				b.WriteByte(':')
				if i >= len(rec) {
					b.WriteString("null")
					continue
				}
				writeCell(&b, rec[i])
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
		v := &doc{name: d.name, data: b.Bytes(), kind: kindJSON}
		if !v.indexJSON() {
			// Cannot happen: the text above is valid JSON.
			v.data = []byte("[]")
			v.jsonErr = ""
			v.kids = nil
		}
		d.csv = v
		d.extra.Add(int64(len(v.data)) + v.extra.Load())
	})
	return d.csv
}

func writeCell(b *bytes.Buffer, cell string) {
	v := strings.TrimSpace(cell)
	switch {
	case v == "":
		b.WriteString("null")
		return
	case v == "true" || v == "false":
		b.WriteString(v)
		return
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		if e, msg := scanNumber([]byte(v), 0); msg == "" && e == len(v) {
			b.WriteString(v)
			return
		}
	}
	s, _ := tool.MarshalNoEscape(cell)
	b.Write(s)
}
