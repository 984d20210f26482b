// Package redact finds credentials in tool results and masks them (or
// flags where they are) before a result is counted, stored or shown.
//
// # Basics
//
// Make one [Redactor] at start-up with [New] (the default rules, plus the
// configuration's extra and allow patterns: a bad one is an error wrapping
// [ErrPattern] that names it) and derive a server's own mode with
// [Redactor.With]. [Redactor.JSON] scans JSON text as it came on the wire
// (a tools/call result: its strings, escapes and all); [Redactor.Text]
// and [Redactor.String] scan plain text (a pad write).
//
//	red, err := redact.New(cfg.Redaction.Options())
//	out, rep, err := red.With(redact.Mode(cfg.RedactionMode(srv))).JSON(nil, raw)
//
// In [Mask] mode each secret becomes [REDACTED:kind:fp]: its rule's id
// (gitleaks' where the rule is gitleaks') and a 4-hex fingerprint, the
// HMAC-SHA256 of the secret under [Options].Key (a random key per
// process by default): the same secret, the same fingerprint, so an agent
// can still tell two apart. Masks are made of letters, digits, - : [ ],
// so they need no escape in a JSON string, and they replace whole escapes
// (a secret written with \/ or \u0041 is found on its decoded text and
// masked from the backslash on): valid JSON stays valid. Masks are never
// taken for secrets, so scanning masked text again changes nothing. In
// [Flag] mode the bytes are kept and the [Report] says where; [Off] does
// not look. The [Report] counts secrets by kind exactly — detection is
// never capped — and lists the first [Options].MaxFindings of them with
// their byte offsets in the input.
//
// Clean input costs almost nothing and allocates nothing: every rule has
// keywords (AKIA, ghp_, xoxb-, eyJ, -----BEGIN, …), found with one
// [bytes.IndexByte] pass per distinct anchor byte (each keyword's rarest
// byte) over 32 KiB chunks that stay in cache; only the text around a hit
// is decoded and run through the rule's regexp (anchored, so it costs
// what the match is long), and src itself is returned when nothing
// matched. Measured on this repository's 2-core box (go test -bench .
// ./redact, medians of -count 5, idle; see NOTES.md): 964 MB/s on 24 MB
// of a clean pod listing and 1,605 MB/s on a clean service log (each one
// JSON string), against 24 GB/s for one bytes.Index pass; 50 MB/s on text
// with a secret every 400 bytes.
//
// The default rules are gitleaks' provider rules (v8.30.1, MIT), ported
// ([Kinds] lists them): AWS access key ids, GitHub (ghp_, gho_, ghu_,
// ghs_, ghr_, github_pat_), GitLab, Slack (bot, user, app, legacy,
// configuration tokens, webhooks), Stripe, JWT, PEM private keys, Google
// API keys, OpenAI, Anthropic, npm and Hugging Face tokens; plus three of
// this package's own: the 40-character AWS secret next to a name saying
// so, the password of scheme://user:password@host, and Authorization:
// Bearer credentials. The generic, entropy-based rule is opt-in
// ([Options].Entropy). On this package's planted corpus (a 3,000-line log
// and a config dump with 80 credentials of 16 kinds) recall is 100% and
// precision 100%; on its 1,400 look-alikes (git commit ids, UUIDs,
// sha256: image digests, npm sha512- integrity strings, base64 image
// data in text and in image blocks, base64 JSON) none is altered by the
// default rules, 17% with the generic rule on.
//
// # Named values
//
// [LooksLikeCredential] is the one rule for a named value (an environment
// variable, a header, a URL query parameter) that must not be written in
// clear into a file a person keeps (`scratchpad-mcp init`): its value is
// a credential by the rules above ([Credential]) or its name says it is
// one ([CredentialName]: token, secret, passw, api_key, auth, …), unless
// the value is empty, a boolean or a small number.
//
// # Caveats
//
//   - Input that is not scanned returns an [*UnscannableError] (matching
//     [ErrUnscannable]) with the input unchanged, never a silent pass:
//     over [Options].MaxBytes (default 512 MiB, the proxy's default
//     max_result_bytes). Input that looks binary (a NUL byte, or invalid
//     UTF-8 above 1 byte in 1,000) is scanned all the same, and
//     [Report].Binary says what it looked like. In JSON a "blob" value
//     (the base64 of a binary resource) is left as it is, not scanned, and
//     counted in [Report].Skipped; the rest of the input is scanned.
//   - Base64 is not decoded: a secret inside an image's data or an
//     encoded payload is not seen (nor is base64 image data ever altered).
//   - Keywords are found in the raw bytes: a secret whose keyword itself
//     is written with \u escapes (\u0067hp_…; no JSON encoder does that
//     to ASCII letters) is missed. Escapes elsewhere in a secret are fine.
//   - A secret longer than its rule's window (1 MiB after its keyword) is
//     masked up to there.
//   - Fingerprints are 16 bits: two different secrets share one with
//     probability 1/65,536 per pair (about 7% among 100 secrets). Without
//     a configured key they change when the process restarts.
//   - Extra patterns without keywords or a literal prefix of 3 bytes are
//     run over the whole text (slowly) and match at most 1 KiB; in JSON a
//     match that crosses a string's end is dropped.
package redact
