package tokens

import (
	"fmt"
	"strings"
)

// ForModel picks the counter for an agent's [agent] provider and model:
//
//   - Anthropic (provider "anthropic", or a model id containing "claude",
//     including Bedrock ids like "anthropic.claude-…" and OpenRouter ids like
//     "anthropic/claude-sonnet-4"): cl100k_base × 1.1 rounded up, an
//     approximation since no public Claude tokenizer exists.
//   - OpenAI: o200k_base for gpt-5*, gpt-4o*, gpt-4.1*, gpt-4.5*, o1*, o3*,
//     o4*, chatgpt-4o*, gpt-oss*; cl100k_base for gpt-4*, gpt-3.5*, and the
//     cl100k embedding and base models.
//   - Gemini: Gemma 3's tokenizer ("gemma3"), exact, for provider "gemini",
//     "google" or "vertex", or a model id starting with "gemini" or "gemma"
//     (after the "provider/" path, so "google/gemini-2.5-pro" and
//     "models/gemini-2.0-flash" too). Claude on Vertex stays Anthropic.
//   - Everything else: o200k_base.
//
// Matching ignores case, a leading "provider/" path and a fine-tune "ft:"
// prefix.
func ForModel(provider, model string) *Counter {
	if c, err := LookupModel(provider, model); err == nil {
		return c
	}
	return &Counter{enc: o200kBase}
}

// LookupModel is [ForModel] without the fallback: a provider and model that
// match none of its rules return an error wrapping [ErrUnknownModel] that names
// the known model families and the encodings, so a command line can refuse a
// typo instead of counting with an encoding the user did not pick.
func LookupModel(provider, model string) (*Counter, error) {
	p, m := strings.ToLower(provider), strings.ToLower(model)
	if p == "anthropic" || strings.Contains(m, "claude") {
		return &Counter{enc: cl100kBase, anthropic: true}, nil
	}
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimPrefix(m, "ft:")
	if p == "gemini" || p == "google" || p == "vertex" || strings.HasPrefix(m, "gemini") || strings.HasPrefix(m, "gemma") {
		return &Counter{gem: gemma3}, nil
	}
	for _, pre := range o200kPrefixes {
		if strings.HasPrefix(m, pre) {
			return &Counter{enc: o200kBase}, nil
		}
	}
	for _, pre := range cl100kPrefixes {
		if strings.HasPrefix(m, pre) {
			return &Counter{enc: cl100kBase}, nil
		}
	}
	return nil, fmt.Errorf("tokens: %w %q (known: claude*, gemini*, gemma*, %s*, %s*; providers anthropic, gemini, google, vertex; or pick --encoding %s, %s, %s or %s)",
		ErrUnknownModel, model, strings.Join(o200kPrefixes, "*, "), strings.Join(cl100kPrefixes, "*, "), O200kBase, CL100kBase, Claude, Gemma3)
}

// o200kPrefixes is checked first because "gpt-4o" and "gpt-4.1" also start
// with the cl100k prefix "gpt-4".
var o200kPrefixes = []string{"gpt-5", "gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o", "gpt-oss", "o1", "o3", "o4"}

var cl100kPrefixes = []string{"gpt-4", "gpt-3.5", "gpt-35", "text-embedding-ada-002", "text-embedding-3", "davinci-002", "babbage-002"}
