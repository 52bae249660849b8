package cclog

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// containsNearEnd is bytes.Contains wherever the key is: in the tail, in
// the head, across the cut between them, or nowhere.
func TestContainsNearEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := bytes.Repeat([]byte("x"), 900+rng.IntN(400))
		if at := rng.IntN(len(b)+10) - 5; at >= 0 && at+len(keyUsage) <= len(b) {
			copy(b[at:], keyUsage)
		}
		if got, want := containsNearEnd(b, keyUsage), bytes.Contains(b, keyUsage); got != want {
			t.Fatalf("len %d: containsNearEnd %v, bytes.Contains %v", len(b), got, want)
		}
	}
}
