package pricing

import (
	"math"
	"time"
)

// SimUnit is one unit of a simulated request: its content hash and size.
// Breakpoint marks a unit after which the request writes a cache entry
// (breakpoint caches only).
type SimUnit struct {
	Hash       string `json:"hash"`
	Tokens     int64  `json:"tokens"`
	Breakpoint bool   `json:"breakpoint,omitempty"`
}

// SimRequest is one request of a simulated session. Family is the request
// family key (provider, model, effort, temperature, stop, tools): requests
// only share the cache of their own family. The envelope is simply the
// first unit(s); flag it as a breakpoint for breakpoint caches.
type SimRequest struct {
	Family string    `json:"family"`
	Units  []SimUnit `json:"units"`
	At     time.Time `json:"at"`
}

// SimResult is what the cache served for one request.
type SimResult struct {
	PromptTokens int64 `json:"promptTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	ColdTokens   int64 `json:"coldTokens"`
}

// Simulator replays requests against a prefix cache, one at a time, so a
// fake provider can drive it request by request. It is not safe for
// concurrent use.
//
// The cache is a trie of unit hashes per family: every request walks it from
// the root, so the longest prefix shared with any earlier request costs one
// lookup per unit, however many requests came before.
type Simulator struct {
	model    CacheModel
	ttl      time.Duration
	roots    map[string]int32
	children map[simEdge]int32
	nodes    []simNode
}

type simEdge struct {
	parent int32
	hash   string
}

type simNode struct {
	// lastUsed is the latest At of a request that contained this prefix. A
	// prefix is live while some request containing it is younger than the TTL.
	lastUsed time.Time
	used     bool
	// entryAt is, for breakpoint caches, the latest time an entry ending
	// here was written (a request flagged this unit) or read.
	entryAt  time.Time
	hasEntry bool
}

// NewSimulator returns an empty cache following m (see CacheModel).
func NewSimulator(m CacheModel) *Simulator {
	ttl := time.Duration(math.MaxInt64) // a TTL beyond 290 years is forever
	if m.TTLSeconds < int64(ttl/time.Second) {
		ttl = time.Duration(m.TTLSeconds) * time.Second
	}
	return &Simulator{
		model:    m,
		ttl:      ttl,
		roots:    make(map[string]int32),
		children: make(map[simEdge]int32),
	}
}

func (s *Simulator) live(set bool, last, now time.Time) bool {
	return set && now.Sub(last) <= s.ttl
}

// Send prices r against the cache, then caches r itself. r reuses the
// longest prefix it shares with any live earlier request of its family,
// rounded by the cache model: down to the granularity above the minimum
// prefix for positional caches; down to the last live entry (a breakpoint of
// an earlier request) for breakpoint caches — reading an entry refreshes it,
// as Anthropic's cache does.
func (s *Simulator) Send(r SimRequest) SimResult {
	var res SimResult
	for _, u := range r.Units {
		res.PromptTokens += u.Tokens
	}
	root, ok := s.roots[r.Family]
	if !ok {
		root = s.newNode()
		s.roots[r.Family] = root
	}

	// Walk the live part of the trie.
	node, shared := root, int64(0)
	entry, entryTokens := int32(-1), int64(0)
	for _, u := range r.Units {
		child, ok := s.children[simEdge{node, u.Hash}]
		if !ok || !s.live(s.nodes[child].used, s.nodes[child].lastUsed, r.At) {
			break
		}
		node = child
		shared += u.Tokens
		if n := &s.nodes[child]; s.live(n.hasEntry, n.entryAt, r.At) {
			entry, entryTokens = child, shared
		}
	}
	if s.model.Kind == Breakpoint {
		res.CachedTokens = s.model.cachedBoundary(entryTokens)
		if res.CachedTokens > 0 {
			s.nodes[entry].entryAt = r.At
		}
	} else {
		res.CachedTokens = s.model.cachedPositional(shared)
	}
	res.ColdTokens = res.PromptTokens - res.CachedTokens

	// Cache the request: every prefix for positional caches, an entry at
	// every flagged unit for breakpoint caches.
	node = root
	for _, u := range r.Units {
		edge := simEdge{node, u.Hash}
		child, ok := s.children[edge]
		if !ok {
			child = s.newNode()
			s.children[edge] = child
		}
		n := &s.nodes[child]
		if !n.used || r.At.After(n.lastUsed) {
			n.lastUsed, n.used = r.At, true
		}
		if u.Breakpoint && (!n.hasEntry || r.At.After(n.entryAt)) {
			n.entryAt, n.hasEntry = r.At, true
		}
		node = child
	}
	return res
}

func (s *Simulator) newNode() int32 {
	s.nodes = append(s.nodes, simNode{})
	return int32(len(s.nodes) - 1)
}

// Simulate replays reqs in order through a fresh Simulator.
func Simulate(m CacheModel, reqs []SimRequest) []SimResult {
	s := NewSimulator(m)
	out := make([]SimResult, len(reqs))
	for i, r := range reqs {
		out[i] = s.Send(r)
	}
	return out
}
