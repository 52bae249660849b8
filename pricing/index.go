package pricing

import "hash/maphash"

// unitIndex finds a unit's position by id. It is an open-addressing hash
// table of positions, built once per quote in one allocation: a Go map of
// 5,000 strings costs more than the whole rest of a quote, and a quote must
// stay well under 100 µs.
type unitIndex struct {
	seed  maphash.Seed
	units []Unit
	slots []int32 // position+1 of the unit in each slot; 0 = empty
	mask  uint64
}

// newUnitIndex indexes units by id. It returns the positions (i, j) of the
// first duplicate id it meets, j > i, or (-1, -1).
func newUnitIndex(units []Unit) (ix unitIndex, dupFirst, dupSecond int) {
	size := uint64(8)
	for size < uint64(len(units))*2 { // load factor <= 1/2 keeps probes short
		size <<= 1
	}
	ix = unitIndex{seed: maphash.MakeSeed(), units: units, slots: make([]int32, size), mask: size - 1}
	for i := range units {
		id := units[i].ID
		h := maphash.String(ix.seed, id) & ix.mask
		for {
			s := ix.slots[h]
			if s == 0 {
				ix.slots[h] = int32(i + 1)
				break
			}
			if units[s-1].ID == id {
				return ix, int(s - 1), i
			}
			h = (h + 1) & ix.mask
		}
	}
	return ix, -1, -1
}

// find returns the position of the unit with the given id, or -1.
func (ix *unitIndex) find(id string) int {
	if len(ix.slots) == 0 {
		return -1
	}
	h := maphash.String(ix.seed, id) & ix.mask
	for {
		s := ix.slots[h]
		if s == 0 {
			return -1
		}
		if ix.units[s-1].ID == id {
			return int(s - 1)
		}
		h = (h + 1) & ix.mask
	}
}
