package budget

import "strings"

// contextWindows maps a model-name prefix to the context window, in
// tokens, that the model can hold as input. The longest matching prefix
// wins, so "gpt-4o-mini" beats "gpt-4o" beats "gpt-4".
//
// Where a provider documents two figures the smaller, always-available one
// is used: a budget that is too small costs an extra exploration call, one
// that is too large overflows the model's context. Notably:
//   - gpt-5*: 400k total, of which 272k input; 272k is used.
//   - claude-sonnet-4*: 1M only behind a beta header; 200k is used.
//   - llama-4*: provider-dependent (up to 10M); 131,072 is used.
//
// Set context_window explicitly to use more.
var contextWindows = map[string]int{
	// OpenAI
	"gpt-5":                  272_000,
	"gpt-5-chat":             128_000,
	"gpt-4.1":                1_047_576,
	"gpt-4.5":                128_000,
	"gpt-4o":                 128_000,
	"chatgpt-4o":             128_000,
	"gpt-4-turbo":            128_000,
	"gpt-4-1106":             128_000,
	"gpt-4-0125":             128_000,
	"gpt-4-vision":           128_000,
	"gpt-4-32k":              32_768,
	"gpt-4":                  8_192,
	"gpt-3.5-turbo":          16_385,
	"gpt-3.5-turbo-0613":     4_096,
	"gpt-3.5-turbo-0301":     4_096,
	"gpt-3.5-turbo-instruct": 4_096,
	"gpt-3.5-turbo-16k":      16_385,
	"gpt-oss":                131_072,
	"o1":                     200_000,
	"o1-mini":                128_000,
	"o1-preview":             128_000,
	"o3":                     200_000,
	"o3-mini":                200_000,
	"o4-mini":                200_000,
	"codex-mini":             200_000,

	// Anthropic: every current model has 200k.
	"claude-":        200_000,
	"claude-2.0":     100_000,
	"claude-instant": 100_000,
	"claude-2":       100_000,
	"claude-2.1":     200_000,

	// Google
	"gemini-":        1_048_576,
	"gemini-pro":     32_760,
	"gemini-1.0":     32_760,
	"gemini-1.5-pro": 2_097_152,
	"gemma-3":        131_072,
	"gemma-2":        8_192,

	// Meta (hyphenated and Ollama spellings)
	"llama-2":   4_096,
	"llama2":    4_096,
	"llama-3":   8_192,
	"llama3":    8_192,
	"llama-3.1": 131_072,
	"llama3.1":  131_072,
	"llama-3.2": 131_072,
	"llama3.2":  131_072,
	"llama-3.3": 131_072,
	"llama3.3":  131_072,
	"llama-4":   131_072,
	"llama4":    131_072,

	// Others often behind an OpenAI-compatible endpoint.
	"mistral-large":  131_072,
	"mistral-medium": 131_072,
	"mistral-small":  32_768,
	"codestral":      32_768,
	"mixtral-8x7b":   32_768,
	"mixtral-8x22b":  65_536,
	"deepseek-chat":  65_536,
	"deepseek-r":     65_536,
	"qwen2.5":        32_768,
	"qwen3":          32_768,
	"grok-3":         131_072,
	"grok-4":         256_000,
}

// vendorPrefixes are stripped from names such as Bedrock's
// "us.anthropic.claude-3-5-sonnet-20240620-v1:0".
var vendorPrefixes = []string{"us.", "eu.", "apac.", "global.", "anthropic.", "meta.", "mistral.", "openai."}

// ContextWindowFor returns the context window, in tokens, of a well-known
// model, matching by the longest known prefix of its lower-cased name. A
// provider path ("openrouter/anthropic/claude-3.5-sonnet", "models/gemini-2.5-pro")
// and Bedrock region/vendor prefixes are ignored. It reports false for a
// model it does not know; never guess a window for those.
func ContextWindowFor(model string) (int, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	for again := true; again; {
		again = false
		for _, p := range vendorPrefixes {
			if rest, ok := strings.CutPrefix(name, p); ok {
				name, again = rest, true
			}
		}
	}
	if name == "" {
		return 0, false
	}
	best, window := "", 0
	for prefix, w := range contextWindows {
		if len(prefix) > len(best) && strings.HasPrefix(name, prefix) {
			best, window = prefix, w
		}
	}
	return window, best != ""
}
