package tokens

import "unsafe"

// unsafeBytes views s as bytes without copying. Counting only reads.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
