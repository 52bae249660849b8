package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"tollgate/guard/api"
	"tollgate/pricing"
	"tollgate/storage"
)

// broker holds the questions that wait for a user and applies the rules of
// ARCHITECTURE.md, "Modes and decisions": one answer per question, a deadline of min(askTimeout, the
// harness's deadline), and no repeat nagging — a decline mutes the rest of
// that session's harness turn.
type broker struct {
	s *Server

	mu      sync.Mutex
	pending map[string]*question
	// open counts undecided questions (and slots reserved for them) per
	// session; openTotal in all.
	open      map[string]int
	openTotal int
	mutedTurn map[string]string // session → the turn in which asks are muted
	modes     map[string]string // session mode overrides (persisted in SQLite)
}

type question struct {
	rec      storage.Rewrite
	quote    *pricing.Quote
	plan     pricing.Plan
	event    api.RewritePending
	deadline time.Time
	timer    *time.Timer
	decided  bool
	done     chan struct{}
	answer   api.Decision
}

func newBroker(s *Server) *broker {
	return &broker{s: s, pending: map[string]*question{}, open: map[string]int{}, mutedTurn: map[string]string{}, modes: map[string]string{}}
}

// load reads session modes and closes questions a previous process left open.
func (b *broker) load(ctx context.Context) error {
	modes, err := b.s.store.SessionModes(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.modes = modes
	b.mu.Unlock()
	if n, err := b.s.store.ExpirePending(ctx, b.s.now()); err != nil {
		return err
	} else if n > 0 {
		b.s.log.Info("declined rewrites left pending by the previous run", "count", n)
	}
	return nil
}

func (b *broker) sessionMode(session string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.modes[session]
}

func (b *broker) setSessionMode(ctx context.Context, session, mode string) error {
	if err := b.s.store.SetSessionMode(ctx, session, mode, b.s.now()); err != nil {
		return err
	}
	b.mu.Lock()
	if mode == "" {
		delete(b.modes, session)
	} else {
		b.modes[session] = mode
	}
	b.mu.Unlock()
	return nil
}

// muted reports whether a decline earlier in this turn silences asks.
// Without a turn nothing is muted.
func (b *broker) muted(session, turn string) bool {
	if turn == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mutedTurn[session] == turn
}

func (b *broker) mute(session, turn string) {
	if turn == "" {
		return
	}
	b.mu.Lock()
	b.mutedTurn[session] = turn
	b.mu.Unlock()
}

// The most questions that wait at once: a harness asks one at a time per
// session, so a few per session covers retries and subagents; the total
// bounds the memory silent askers hold (20 of them asking with "wait": 0
// build thousands of questions, 1.5 GB, when nothing caps them).
const (
	MaxPendingPerSession = 8
	MaxPendingTotal      = 256
)

// reserve takes a slot for a question of session, or says why there is
// none. A slot is given back by release or when the question is decided.
func (b *broker) reserve(session string) (bool, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.open[session] >= MaxPendingPerSession:
		return false, fmt.Sprintf("%d questions of this session already wait (the limit)", MaxPendingPerSession)
	case b.openTotal >= MaxPendingTotal:
		return false, fmt.Sprintf("%d questions already wait (the limit)", MaxPendingTotal)
	}
	b.open[session]++
	b.openTotal++
	return true, ""
}

func (b *broker) release(session string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked(session)
}

func (b *broker) releaseLocked(session string) {
	if b.open[session]--; b.open[session] <= 0 {
		delete(b.open, session)
	}
	b.openTotal--
}

// ask registers a pending question (its slot reserved) and arms its
// deadline.
func (b *broker) ask(q *question) {
	q.done = make(chan struct{})
	wait := q.deadline.Sub(b.s.now())
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[q.rec.ID] = q
	// Armed under the lock: decide reads q.timer under it too, and the
	// timer cannot decide before this function returns.
	q.timer = time.AfterFunc(wait, func() {
		b.decide(context.Background(), q.rec.ID, api.Decline, api.ReasonTimeout, "", true)
	})
}

// lookup returns a pending or recently decided question held in memory.
func (b *broker) lookup(id string) (*question, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.pending[id]
	return q, ok
}

// pendingEvents lists the questions still waiting, oldest first.
func (b *broker) pendingEvents() []api.RewritePending {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []api.RewritePending
	for _, q := range b.pending {
		if !q.decided {
			out = append(out, q.event)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AskedAt.Before(out[j].AskedAt) })
	return out
}

var errExpired = errors.New("the question expired")

// decide settles a question once. The first caller wins; later ones get
// storage.ErrAlreadyDecided. The decision is committed before waiters wake, so
// a harness that hears "allow" finds it in the database too.
func (b *broker) decide(ctx context.Context, id, decision, reason, answeredBy string, fromTimer bool) (api.Decision, error) {
	b.mu.Lock()
	q, ok := b.pending[id]
	if !ok {
		b.mu.Unlock()
		return api.Decision{}, storage.ErrNotFound
	}
	if q.decided {
		b.mu.Unlock()
		return q.answer, storage.ErrAlreadyDecided
	}
	if !fromTimer && !b.s.now().Before(q.deadline) {
		// The dialog counted down to this moment; a late click is refused
		// and the timer's decline stands.
		b.mu.Unlock()
		return api.Decision{}, errExpired
	}
	q.decided = true
	b.releaseLocked(q.rec.Session.ID)
	q.answer = decisionFor(q.rec, q.quote, q.plan, decision, reason)
	timer := q.timer
	b.mu.Unlock()
	timer.Stop()

	if decision == api.Decline {
		b.mute(q.rec.Session.ID, q.rec.Turn)
	}
	if err := b.s.store.DecideRewrite(ctx, id, decision, reason, q.rec.Mode, q.answer.Order, answeredBy, b.s.now()); err != nil {
		b.s.log.Error("storing a decision", "rewrite", id, "err", err)
	}
	close(q.done)
	b.s.events.publish(EventRewriteDecided, api.RewriteDecided{
		Rewrite: id, Session: q.rec.Session.ID, Decision: decision, Reason: reason, Mode: q.rec.Mode, Order: q.answer.Order, AnsweredBy: answeredBy,
	})
	// Keep the decided question a little while so a harness polling right
	// after the decision is served from memory; then forget it.
	time.AfterFunc(time.Minute, func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	})
	return q.answer, nil
}

// decisionFor builds the answer a harness executes. An allow carries exactly
// what the chosen order applies; a decline applies nothing.
func decisionFor(rec storage.Rewrite, quote *pricing.Quote, plan pricing.Plan, decision, reason string) api.Decision {
	d := api.Decision{Rewrite: rec.ID, Status: api.StatusDecided, Session: rec.Session.ID, Decision: decision, Reason: reason, Mode: rec.Mode, Quote: quote}
	switch {
	case decision == api.Decline:
		d.Apply = &pricing.Apply{Prune: []string{}}
	case quote != nil:
		apply := quote.Apply
		if apply.Prune == nil {
			apply.Prune = []string{}
		}
		d.Apply, d.Order = &apply, quote.Recommended
	default:
		// Nothing priced (off, or pricing failed): the plan as the harness
		// shipped it.
		d.Apply = asShipped(plan)
	}
	return d
}

func asShipped(plan pricing.Plan) *pricing.Apply {
	a := &pricing.Apply{Prune: make([]string, 0, len(plan.Prune))}
	if plan.Summarize != nil {
		a.Summarize = &pricing.Span{Start: plan.Summarize.Start, End: plan.Summarize.End}
	}
	for _, p := range plan.Prune {
		a.Prune = append(a.Prune, p.ID)
	}
	return a
}

// decisionFromRecord rebuilds an answer from the database (a question this
// process does not hold in memory).
func decisionFromRecord(rec storage.Rewrite, plan pricing.Plan) api.Decision {
	var quote *pricing.Quote
	if rec.Quote != "" && rec.Quote != "null" {
		var q pricing.Quote
		if json.Unmarshal([]byte(rec.Quote), &q) == nil {
			quote = &q
		}
	}
	if rec.Status == api.StatusPending {
		d := api.Decision{Rewrite: rec.ID, Status: api.StatusPending, Session: rec.Session.ID, Mode: rec.Mode, Quote: quote}
		if !rec.DeadlineAt.IsZero() {
			t := rec.DeadlineAt
			d.DeadlineAt = &t
		}
		return d
	}
	d := decisionFor(rec, quote, plan, rec.Decision, rec.Reason)
	if rec.Order != "" {
		d.Order = rec.Order
	}
	return d
}

// wait blocks until q is decided, ctx ends or timeout passes.
func (q *question) wait(ctx context.Context, timeout time.Duration) (api.Decision, bool) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-q.done:
		return q.answer, true
	case <-ctx.Done():
	case <-t.C:
	}
	return api.Decision{}, false
}
