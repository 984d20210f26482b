package explore

import (
	"os"
)

// OpenRegular opens name under root for reading if it is a regular file.
// Anything else (a FIFO, a device, a socket, a directory) is refused with
// [ErrNotRegular] before it is opened, since opening a FIFO blocks until
// a writer comes (each such call would pin a thread); the open itself
// does not block either (O_NONBLOCK where the system has it), should the
// file be swapped for one meanwhile. Other errors are the root's.
func OpenRegular(root *os.Root, name string) (*os.File, error) {
	st, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	f, err := root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}
