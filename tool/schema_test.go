package tool

import "testing"

func TestObject(t *testing.T) {
	got := string(Object(
		String("file", "The file.", Required()),
		Integer("lines", "How many <lines>.", Min(1), Default(50)),
		Boolean("all", ""),
		String("op", "", Enum("a", "b"), MaxLength(8), Required())))
	want := `{"properties":{"all":{"type":"boolean"},"file":{"description":"The file.","type":"string"},` +
		`"lines":{"default":50,"description":"How many \u003clines\u003e.","minimum":1,"type":"integer"},` +
		`"op":{"enum":["a","b"],"maxLength":8,"type":"string"}},"required":["file","op"],"type":"object"}`
	if got != want {
		t.Errorf("Object:\n got %s\nwant %s", got, want)
	}
	if got := string(Object()); got != `{"properties":{},"required":[],"type":"object"}` {
		t.Errorf("empty Object: %s", got)
	}
}
