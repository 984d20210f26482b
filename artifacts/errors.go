package artifacts

import "errors"

// Sentinel errors, wrapped with %w and context; compare with [errors.Is].
// Their messages are written for the model, which sees them.
var (
	// ErrInvalidName reports a file name with nothing usable in it
	// ("", "../", "???").
	ErrInvalidName = errors.New("not a usable artifact file name")

	// ErrOutsideArtifacts reports a read that would leave the run's
	// artifacts directory: an absolute path, a ".." element, or a
	// symbolic link pointing elsewhere. The message never says where.
	ErrOutsideArtifacts = errors.New("artifact names are plain file names inside the run's artifacts; paths outside it are refused")

	// ErrInvalidRunID reports a run id that is not one plain path element.
	ErrInvalidRunID = errors.New("not a valid run id")

	// ErrNotFile reports a name that exists but is not a regular file.
	ErrNotFile = errors.New("not a regular file")
)
