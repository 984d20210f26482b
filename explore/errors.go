package explore

import "errors"

// Sentinel errors, wrapped with %w by the file-access layer. [Call] turns each
// into a structured tool error whose "error" code is given in brackets; the
// messages never name anything outside the read root.
var (
	// ErrOutsideRoot: the file argument is absolute, escapes the read root with
	// "..", or goes through a symlink that leaves it ["file_outside_root"].
	ErrOutsideRoot = errors.New("path is outside the read root")
	// ErrInvalidName: the file argument is empty or holds a NUL byte ["invalid_file_name"].
	ErrInvalidName = errors.New("invalid file name")
	// ErrNotFound: no such file under the read root ["file_not_found"].
	ErrNotFound = errors.New("file not found")
	// ErrNotRegular: the name is a directory or a device, not a regular file ["not_a_regular_file"].
	ErrNotRegular = errors.New("not a regular file")
	// ErrIO: the file exists but could not be read ["io_error"].
	ErrIO = errors.New("I/O error")
	// ErrNoRoot: the [Env] is nil or has no Root or no Count function ["no_read_root"].
	ErrNoRoot = errors.New("no read root configured")
	// ErrBadPath: a JSON path (RFC 9535, or the dotted shorthand) could not
	// be parsed ["invalid_path"; a field of fields, sort_by, group_by or
	// distinct: "invalid_arguments"]. The error says at which column.
	ErrBadPath = errors.New("invalid JSON path")
	// ErrBadFilter: a filter argument is not an RFC 9535 filter expression
	// ["bad_filter"]. The error says at which column.
	ErrBadFilter = errors.New("invalid filter")
)
