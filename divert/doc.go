// Package divert decides whether a tool result reaches the model or the
// disk, stores the diverted ones, and writes the pointer the model gets
// instead.
//
// # Basics
//
// [Decide] takes an upstream's raw tools/call result and the calling
// [Agent]: below the tool's threshold (counted with the agent's model's
// tokens, stopping as soon as the threshold is reached) the bytes are
// returned untouched; at or above it, [Save] writes the output atomically
// (package memdir's write: 0600, the folder 0700, never through a link
// leading out of [Agent].Top, memory_dir) under the agent's scratchpad
// directory and the result becomes a short
// [Pointer]: file, format, size, a sketch of the shape, and ready-to-run
// exploration calls built from the real data.
//
// Large outputs are handled in one pass and without copies of their size:
// a result over 1 MiB with fewer bytes than a quarter of the threshold is
// not read at all; otherwise it is scanned once, not decoded (and not validated again
// when [Call.Valid]); the threshold is settled on an unescaped prefix of
// the text; the text is unescaped once (over the result's own bytes when
// [Call.Owned]); the stored file is pretty-printed, hashed and
// line-counted as it is written, and the sketch's array lengths come from
// the same pass.
//
//	out, err := divert.Decide(divert.Call{Server: "k8s", Tool: "list_pods",
//		Threshold: 5000, Result: raw}, agent, divert.Options{})
//
// # Caveats
//
//   - Results with isError, images or audio always pass through.
//   - With [Call.Valid], bytes that are not valid JSON are read wrongly
//     (never with a panic): set it only for bytes already validated.
//   - With [Call.Owned], a diverted result's bytes are overwritten (the
//     text unescaped in place): the caller must not use them afterwards.
//   - Outputs over [Options.ExactCountLimit] get an estimated count
//     (marked "~") from their first MiB; the exact count finishes in the
//     background, reading the stored file back a few MiB at a time (the
//     output itself is let go when Decide returns), and reaches
//     [Account].Intercepted. JSON laid out in a way the file cannot give
//     back (not compact, not indented as stored, not Python's ", " and
//     ": ") and counters without CountReader are counted before Decide
//     returns instead.
//   - A save that fails (disk full, memory_dir not writable) becomes an
//     isError result that says why; the output is not returned either,
//     and no partial file is left.
package divert
