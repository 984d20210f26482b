package tokens_test

import (
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

func ExampleForModel() {
	c := tokens.ForModel("openai", "gpt-4o")
	c.Preload() // at start-up, so the first tool call does not wait
	fmt.Println(c.Name(), c.CountString("hello world"))

	claude := tokens.ForModel("anthropic", "claude-sonnet-4")
	fmt.Println(claude.Name(), claude.CountString("hello world"))

	// Gemini: Gemma 3's tokenizer; a special token in the text is one token.
	gemini := tokens.ForModel("google", "gemini-2.5-pro")
	fmt.Println(gemini.Name(), gemini.CountString("<start_of_turn>hello world"))
	// Output:
	// o200k_base 2
	// cl100k_base*1.1 (anthropic approximation) 3
	// gemma3 3
}

func ExampleCounter_AtLeast() {
	c := tokens.ForModel("", "gpt-4.1")
	result := []byte(`{"items": [{"name": "web-0", "phase": "Running"}]}`)
	// Fewer bytes than the threshold: answered without counting.
	fmt.Println(c.AtLeast(result, 10000))
	// Otherwise counting stops as soon as the threshold is reached.
	fmt.Println(c.AtLeast(result, 5))
	// Output:
	// false
	// true
}

func ExampleForEncoding() {
	_, err := tokens.ForEncoding("p50k_base")
	fmt.Println(err)
	// Output:
	// tokens: unknown encoding "p50k_base" (known: o200k_base, cl100k_base, claude, gemma3)
}
