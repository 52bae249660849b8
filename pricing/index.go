package pricing

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"strings"
)

// Locating the plan's ids and rejecting duplicate unit ids is most of a
// quote's work, and a quote must stay well under 100 µs for 5,000 units. A
// Go map of 5,000 strings, or any table with one slot per unit, costs more
// than the rest of the quote together (mostly mispredicted branches and
// cache misses on the probes). Instead, one pass over the units hashes each
// id once and
//
//   - looks it up in a tiny table of the plan's ids (a handful of entries,
//     always in L1, the branch almost never taken), and
//   - sets a bit for it in a bitset of 2^18 bits on the stack; an id whose
//     bit is already set is a duplicate candidate.
//
// Only when candidates exist (a few dozen per 5,000 units) does a second pass
// collect the units whose bit collided, sort them by hash and compare their
// ids for real.

// chunkShift sets the spacing of the stored prefix sums: P(k) is kept for
// every multiple of 64, and sums in between are completed from the units.
const chunkShift = 6

// hash32 hashes an id, keyed by a per-quote seed: one multiply-xorshift
// round per 8-byte word (shorter tails read as two overlapping 4-byte
// words, as wyhash does), inlined, about three times as fast as
// hash/maphash on ids of ten-odd bytes. Its quality only matters for speed:
// equal hashes are always confirmed by comparing the ids.
func hash32(seed uint64, s string) uint32 {
	h := seed ^ uint64(len(s))*0x9e3779b97f4a7c15
	for len(s) >= 8 {
		h = round(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
		s = s[8:]
	}
	switch n := len(s); {
	case n >= 4:
		lo := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
		t := s[n-4:]
		hi := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24
		h = round(h, lo|hi<<32)
	case n > 0:
		h = round(h, uint64(s[0])|uint64(s[n/2])<<8|uint64(s[n-1])<<16)
	}
	h *= 0x94d049bb133111eb
	return uint32(h >> 32)
}

func round(h, w uint64) uint64 {
	h = (h ^ w) * 0xbf58476d1ce4e5b9
	return h ^ h>>31
}

// newSeed draws a per-quote seed, so that no fixed set of ids collides.
func newSeed() uint64 {
	var s maphash.Hash
	return s.Sum64() // a fresh Hash has a random seed
}

// idRef is one distinct id the plan mentions, and where it stands.
type idRef struct {
	id   string
	hash uint32
	pos  int // -1 until found
}

// planIDs is an open-addressing table of the plan's distinct ids, behind a
// 4,096-bit filter of their hashes: nearly every unit is turned away by the
// filter, a branch the CPU learns to predict.
type planIDs struct {
	filter [64]uint64
	slots  []int32 // index+1 into refs; 0 = empty
	mask   uint32
	refs   []idRef
}

func filterBit(h uint32) (word uint32, mask uint64) { return h >> 6 & 63, uint64(1) << (h & 63) }

func newPlanIDs(capacity int) planIDs {
	size := 8
	for size < capacity*2 {
		size <<= 1
	}
	return planIDs{slots: make([]int32, size), mask: uint32(size - 1), refs: make([]idRef, 0, capacity)}
}

// add returns the ref of id, adding it when new.
func (t *planIDs) add(id string, h uint32) int {
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		s := t.slots[j]
		if s == 0 {
			w, m := filterBit(h)
			t.filter[w] |= m
			t.refs = append(t.refs, idRef{id: id, hash: h, pos: -1})
			t.slots[j] = int32(len(t.refs))
			return len(t.refs) - 1
		}
		if r := &t.refs[s-1]; r.hash == h && r.id == id {
			return int(s - 1)
		}
	}
}

// see records that the unit at pos has this id, if the plan mentions it.
func (t *planIDs) see(id string, h uint32, pos int) {
	if w, m := filterBit(h); t.filter[w]&m == 0 {
		return
	}
	for j := h & t.mask; ; j = (j + 1) & t.mask {
		s := t.slots[j]
		if s == 0 {
			return
		}
		if r := &t.refs[s-1]; r.hash == h && r.id == id {
			if r.pos < 0 {
				r.pos = pos
			}
			return
		}
	}
}

// scanUnits validates the units, stores the prefix sums, locates the plan's
// ids and finds the first duplicate id. It returns the first error.
func (q *quoteState) scanUnits(seed uint64, ids *planIDs) error {
	units := q.req.Units
	n := len(units)
	q.chunks = make([]int64, n>>chunkShift+1)
	hashes := make([]uint32, n)

	var onStack [1 << 12]uint64 // 2^18 bits, 32 KiB
	set, logBits := onStack[:], 18
	if n > 1<<14 { // keep the bitset 16 times as large as the surface
		logBits = min(bits.Len(uint(n))+4, 32)
		set = make([]uint64, 1<<(logBits-6))
	}
	var collidedOnStack [64]uint32
	collided := collidedOnStack[:0] // bits set twice

	hashes = hashes[:len(units)] // lets the compiler drop the bounds checks below
	filter := &ids.filter
	shift := 32 - logBits
	var prefix int64
	nflagged := 0
	for i := range units {
		u := &units[i]
		if i&(1<<chunkShift-1) == 0 {
			q.chunks[i>>chunkShift] = prefix
		}
		// One rare branch for three checks: a negative count is a huge uint64.
		if u.ID == "" || uint64(u.Tokens) > uint64(maxTokens-q.env-prefix) {
			return unitError(i, u, maxTokens-q.env-prefix)
		}
		prefix += u.Tokens
		if u.Breakpoint {
			nflagged++
		}
		h := hash32(seed, u.ID)
		hashes[i] = h
		if w, m := filterBit(h); filter[w]&m != 0 {
			ids.see(u.ID, h, i)
		}
		bit := h >> shift
		if w, m := bit>>6, uint64(1)<<(bit&63); set[w]&m != 0 {
			collided = append(collided, bit)
		} else {
			set[w] |= m
		}
	}
	q.total = prefix

	if q.model.Kind == Breakpoint && nflagged > 0 {
		q.flagged = make([]int32, 0, nflagged)
		for i := range units {
			if units[i].Breakpoint {
				q.flagged = append(q.flagged, int32(i))
			}
		}
	}
	if len(collided) > 0 {
		return findDuplicate(units, hashes, collided, logBits)
	}
	return nil
}

// unitError says what is wrong with the unit at i; room is the token budget
// left under 2^50.
func unitError(i int, u *Unit, room int64) error {
	switch {
	case u.ID == "":
		return fieldErrorf(indexed("units", i)+".id", "must not be empty")
	case u.Tokens < 0:
		return fieldErrorf(indexed("units", i)+".tokens", "must be >= 0, not %d", u.Tokens)
	}
	return fieldErrorf(indexed("units", i)+".tokens", "the surface exceeds 2^50 tokens (%d more allowed)", room)
}

// findDuplicate confirms or refutes the duplicate candidates: the units
// whose bit is among the collided ones (a few dozen per 5,000 units).
func findDuplicate(units []Unit, hashes []uint32, collided []uint32, logBits int) error {
	var filter [64]uint64
	for _, bit := range collided {
		w, m := filterBit(bit)
		filter[w] |= m
	}
	slices.Sort(collided)
	candidates := make([]uint64, 0, 2*len(collided)+16) // hash<<32 | position, sorted: equal hashes side by side
	for i, h := range hashes {
		bit := h >> (32 - logBits)
		if w, m := filterBit(bit); filter[w]&m == 0 {
			continue
		}
		if _, found := slices.BinarySearch(collided, bit); found {
			candidates = append(candidates, uint64(h)<<32|uint64(i))
		}
	}
	slices.Sort(candidates)
	first, second := -1, -1
	for i := 0; i < len(candidates); {
		j := i + 1
		for j < len(candidates) && candidates[j]>>32 == candidates[i]>>32 {
			j++
		}
		if j-i > 1 {
			// Sort the run by id, then position: duplicates become neighbours
			// even if someone crafted ids that all hash alike.
			run := candidates[i:j]
			slices.SortFunc(run, func(x, y uint64) int {
				if c := strings.Compare(units[uint32(x)].ID, units[uint32(y)].ID); c != 0 {
					return c
				}
				return int(uint32(x)) - int(uint32(y))
			})
			for x := 0; x+1 < len(run); x++ {
				px, py := int(uint32(run[x])), int(uint32(run[x+1]))
				if units[px].ID == units[py].ID && (second < 0 || py < second) {
					first, second = px, py
				}
			}
		}
		i = j
	}
	if second >= 0 {
		return fieldErrorf(indexed("units", second)+".id", "duplicate id %q (also units[%d])", units[second].ID, first)
	}
	return nil
}
