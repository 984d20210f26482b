package wire

import "slices"

// Era is the protocol generation a request belongs to. The zero value is
// [EraLegacy], so a request nothing marks as modern is served as today.
type Era uint8

const (
	// EraLegacy is the 2025 revisions (and 2024-11-05): initialize, sessions,
	// server→client requests.
	EraLegacy Era = iota
	// EraModern is 2026-07-28: a _meta envelope on every request, no session.
	EraModern
)

func (e Era) String() string {
	if e == EraModern {
		return "modern"
	}
	return "legacy"
}

// Modern is the one modern revision served.
const Modern = "2026-07-28"

// legacy is newest first, as go-sdk v1.8.0 lists them (shared.go
// supportedProtocolVersions without 2026-07-28).
var legacy = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// Legacy returns the 2025-era revisions served, newest first (a fresh copy: it
// is handed to go-sdk as SupportedProtocolVersions, which must never include
// [Modern]).
func Legacy() []string { return slices.Clone(legacy) }

// Served returns every revision served, newest first: [Modern], then
// [Legacy]. It is server/discover's supportedVersions and -32022's
// data.supported.
func Served() []string { return append([]string{Modern}, legacy...) }

// EraOf says which era a revision belongs to, and whether it is served.
func EraOf(version string) (Era, bool) {
	if version == Modern {
		return EraModern, true
	}
	if slices.Contains(legacy, version) {
		return EraLegacy, true
	}
	return claimed(version), false
}

// claimed is the era a version string claims, served or not: go-sdk compares
// versions as strings, so anything sorting at or after [Modern] ("2099-01-01",
// "v999.0.0") asks for the modern protocol and is answered -32022, not treated
// as a 2025 request.
func claimed(version string) Era {
	if version >= Modern {
		return EraModern
	}
	return EraLegacy
}
