package pricing

// Growth rebuilds a conversation's surface from what its provider billed:
// prompts are the prompt sizes (Usage.Prompt) of its requests in order,
// after an envelope the first of them re-read. Each prompt that grows past
// what the ones before it covered adds the difference as a unit, add(i,
// tokens) for request i; one that does not grow (nothing new, or content
// cleared) adds none. It returns what the envelope and the units cover.
//
// The harnesses' hooks and `tollgate price` rebuild a session with this
// one rule, so they cut the same units at the same moment.
func Growth(envelope int64, prompts []int64, add func(i int, tokens int64)) (covered int64) {
	covered = envelope
	for i, p := range prompts {
		if p <= covered {
			continue
		}
		add(i, p-covered)
		covered = p
	}
	return covered
}
