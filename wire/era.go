package wire

import "slices"

// Era is the protocol generation a request belongs to, named by its
// revision. The zero value is [Era2025], so a request nothing marks as
// 2026-07-28 is served as a 2025 one.
type Era uint8

const (
	// Era2025 is the 2025 revisions (and 2024-11-05): initialize, sessions,
	// server→client requests.
	Era2025 Era = iota
	// Era20260728 is 2026-07-28: a _meta envelope on every request, no session.
	Era20260728
)

func (e Era) String() string {
	if e == Era20260728 {
		return Revision20260728
	}
	return "2025"
}

// Revision20260728 is the one revision of [Era20260728] served.
const Revision20260728 = "2026-07-28"

// revisions2025 is newest first, as go-sdk v1.8.0 lists them (shared.go
// supportedProtocolVersions without 2026-07-28).
var revisions2025 = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Revisions2025 returns the 2025-era revisions served, newest first (a fresh copy: it
// is handed to go-sdk as SupportedProtocolVersions, which must never include
// [Revision20260728]).
func Revisions2025() []string { return slices.Clone(revisions2025) }

// Served returns every revision served, newest first: [Revision20260728], then
// [Revisions2025]. It is server/discover's supportedVersions and -32022's
// data.supported.
func Served() []string { return append([]string{Revision20260728}, revisions2025...) }

// EraOf says which era a revision belongs to, and whether it is served.
func EraOf(version string) (Era, bool) {
	if version == Revision20260728 {
		return Era20260728, true
	}
	if slices.Contains(revisions2025, version) {
		return Era2025, true
	}
	return claimed(version), false
}

// claimed is the era a version string claims, served or not: go-sdk compares
// versions as strings, so anything sorting at or after [Revision20260728] ("2099-01-01",
// "v999.0.0") asks for the 2026-07-28 protocol and is answered -32022, not treated
// as a 2025 request.
func claimed(version string) Era {
	if version >= Revision20260728 {
		return Era20260728
	}
	return Era2025
}
