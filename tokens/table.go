package tokens

import (
	"encoding/binary"
	"errors"
	"math/bits"
)

// rankTable maps token bytes to ranks. It is an open-addressing hash table
// over one byte arena, built in a single pass with no per-token allocation
// (loading o200k_base into a Go map took several times longer), and each
// slot carries a hash tag and the key length so most misses never touch
// the arena.
//
// Slot layout, 0 meaning empty:
//
//	bits  0..21  offset in arena
//	bits 22..29  key length
//	bits 30..47  rank
//	bits 48..63  hash tag
//
// Keys are never empty, so an occupied slot is never 0.
type rankTable struct {
	arena []byte
	slots []uint64
	mask  uint64
	count int // entries, as set by the loader
}

const (
	slotOffBits  = 22
	slotLenBits  = 8
	slotRankBits = 18
	slotLenShift = slotOffBits
	slotRankShif = slotOffBits + slotLenBits
	slotTagShift = slotRankShif + slotRankBits
	slotOffMask  = 1<<slotOffBits - 1
	slotKeyMask  = uint64(1<<(64-slotTagShift)-1)<<slotTagShift | (1<<slotLenBits-1)<<slotLenShift
)

var errTableLimits = errors.New("vocabulary exceeds the rank table's limits")

func newRankTable(entries, arenaCap int) *rankTable {
	n := 1 << bits.Len(uint(entries*5/2)) // load factor below 0.4
	return &rankTable{arena: make([]byte, 0, arenaCap), slots: make([]uint64, n), mask: uint64(n - 1)}
}

// insert adds the token whose bytes are the last n bytes of the arena.
func (t *rankTable) insert(n int, rank uint32) error {
	off := len(t.arena) - n
	return t.insertHashed(off, n, hashBytes(t.arena[off:]), rank)
}

// insertHashed adds the token arena[off:off+n], whose hashBytes is h.
func (t *rankTable) insertHashed(off, n int, h uint64, rank uint32) error {
	if off+n > slotOffMask || n == 0 || n >= 1<<slotLenBits || rank >= 1<<slotRankBits {
		return errTableLimits
	}
	e := h>>slotTagShift<<slotTagShift | uint64(n)<<slotLenShift | uint64(rank)<<slotRankShif | uint64(off)
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i] == 0 {
			t.slots[i] = e
			return nil
		}
	}
}

func (t *rankTable) get(b []byte) (uint32, bool) {
	h := hashBytes(b)
	want := h>>slotTagShift<<slotTagShift | uint64(len(b))<<slotLenShift
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 {
			return rankMax, false
		}
		if e&slotKeyMask == want {
			off := int(e & slotOffMask)
			if string(t.arena[off:off+len(b)]) == string(b) {
				return uint32(e >> slotRankShif & (1<<slotRankBits - 1)), true
			}
		}
	}
}

// hashBytes is a small multiply-xorshift hash; keys are short (a BPE pair
// or a pre-tokenizer piece), so the common case is one 8-byte load. A key
// shorter than 8 bytes is read with one load when its slice has the
// capacity (keys are windows into a larger text), and the bytes past its
// length are masked off.
func hashBytes(b []byte) uint64 {
	const k1, k2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
	h := uint64(len(b)) * k1
	if len(b) < 8 && cap(b) >= 8 {
		v := binary.LittleEndian.Uint64(b[:8]) & (1<<(8*uint(len(b))) - 1)
		h = (h ^ v) * k2
		h ^= h >> 29
		h *= k1
		h ^= h >> 32
		return h
	}
	for len(b) >= 8 {
		h = (h ^ binary.LittleEndian.Uint64(b)) * k2
		h ^= h >> 31
		b = b[8:]
	}
	if len(b) > 0 {
		var v uint64
		for i, c := range b {
			v |= uint64(c) << (8 * i)
		}
		h = (h ^ v) * k2
	}
	h ^= h >> 29
	h *= k1
	h ^= h >> 32
	return h
}
