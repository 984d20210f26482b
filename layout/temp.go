package layout

import "strings"

// tempMark is in the name of every temporary file of an atomic write,
// after a leading dot: ".{name}.tmp-{random}".
const tempMark = ".tmp-"

// TempPattern is the [os.CreateTemp] pattern of a temporary file that will
// be renamed to name: ".{name}.tmp-*". It is hidden, so no listing shows
// it, and [IsTemp] recognises it.
func TempPattern(name string) string { return "." + name + tempMark + "*" }

// TempName is the temporary name of a write to name made with a random
// suffix of the caller's (where [os.CreateTemp] cannot be used, as in an
// [os.Root]): ".{name}.tmp-{random}".
func TempName(name, random string) string { return "." + name + tempMark + random }

// IsTemp reports whether a file name is a temporary file of an atomic
// write: this package's names, and the ".tmp-…" names earlier versions of
// pad and artifacts wrote, so a crash's leftovers from before an upgrade
// are still found.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tempMark)
}
