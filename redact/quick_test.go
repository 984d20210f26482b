package redact

import (
	"math/rand/v2"
	"testing"
)

func TestQuick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	red, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range plantedKinds {
		p := plant(r, k)
		in := toolResult("before\n" + p.Text + "\nafter")
		out, rep, err := red.JSON(nil, in)
		t.Logf("%s: %v %v\n%s", k, rep.Counts, err, out)
	}
}
