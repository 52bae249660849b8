package guard

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"time"
)

// LeaseDuration is how long an engine stays live without a heartbeat.
const LeaseDuration = 30 * time.Second

// Engine is one registered harness engine.
type Engine struct {
	ID          string    `json:"engine"`
	Harness     string    `json:"harness"`
	Version     string    `json:"version,omitempty"`
	Profile     string    `json:"profile,omitempty"`
	PID         int       `json:"pid,omitempty"`
	Registered  time.Time `json:"registeredAt"`
	LastContact time.Time `json:"lastContact"`
	Expires     time.Time `json:"expiresAt"`
}

// engineRegistry holds leases in memory: an engine that does not heartbeat
// within LeaseDuration stops counting as arming the guard. Leases are not
// persisted: after a restart harnesses re-register on their next heartbeat's
// 404.
type engineRegistry struct {
	mu      sync.Mutex
	now     func() time.Time
	engines map[string]*Engine
}

func newEngineRegistry(now func() time.Time) *engineRegistry {
	return &engineRegistry{now: now, engines: map[string]*Engine{}}
}

func newID(prefix string) string {
	b := make([]byte, 9)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return prefix + hex.EncodeToString(b)
}

func (r *engineRegistry) register(e Engine) Engine {
	now := r.now()
	e.ID = newID("e_")
	e.Registered, e.LastContact, e.Expires = now, now, now.Add(LeaseDuration)
	r.mu.Lock()
	r.expireLocked(now)
	r.engines[e.ID] = &e
	r.mu.Unlock()
	return e
}

// heartbeat renews a live lease; false when the id is unknown or expired.
func (r *engineRegistry) heartbeat(id string) bool {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(now)
	e, ok := r.engines[id]
	if !ok {
		return false
	}
	e.LastContact, e.Expires = now, now.Add(LeaseDuration)
	return true
}

// touch renews a lease as a side effect of other traffic from the engine.
func (r *engineRegistry) touch(id string) {
	if id != "" {
		r.heartbeat(id)
	}
}

// get returns a live engine.
func (r *engineRegistry) get(id string) (Engine, bool) {
	if id == "" {
		return Engine{}, false
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.engines[id]
	if !ok || now.After(e.Expires) {
		return Engine{}, false
	}
	return *e, true
}

func (r *engineRegistry) remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.engines[id]
	delete(r.engines, id)
	return ok
}

func (r *engineRegistry) list() []Engine {
	now := r.now()
	r.mu.Lock()
	r.expireLocked(now)
	out := make([]Engine, 0, len(r.engines))
	for _, e := range r.engines {
		out = append(out, *e)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Registered.Before(out[j].Registered) })
	return out
}

func (r *engineRegistry) live() int {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(now)
	return len(r.engines)
}

// expireLocked drops leases past their expiry; it returns how many it dropped.
func (r *engineRegistry) expireLocked(now time.Time) int {
	n := 0
	for id, e := range r.engines {
		if now.After(e.Expires) {
			delete(r.engines, id)
			n++
		}
	}
	return n
}
