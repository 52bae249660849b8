package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// groupWriter commits concurrent small writes together. SQLite has one
// writer at a time; a transaction per API call would spend most of its time
// on BEGIN/COMMIT and WAL appends. Calls queue here, and one goroutine runs
// as many as are waiting (up to maxGroup) in a single transaction; callers
// are answered only after the COMMIT that holds their rows. When a job
// fails, the group is rolled back and its jobs run again one transaction
// each, so one bad write never sinks the others (failures are rare: bodies
// are validated before they get here). Recorded requests (RecordRequest)
// share what a group reads once — the ledger's state, a session's count,
// cost and waiting rewrites — and write each session's row once, before
// COMMIT or before any other job (stmtTx.flushSessions).
//
// Idle cost is nil: a lone call is committed at once, without waiting for
// company; a group lingers for more only when it, or the group before it,
// had several.
type groupWriter struct {
	db      *DB
	jobs    chan *writeJob
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type writeJob struct {
	ctx context.Context
	fn  func(q querier) (any, error)
	// record: the job only records requests (RecordRequest), which keeps
	// the transaction's remembered ledger states true.
	record bool
	result any
	err    error
	ready  chan struct{}
}

const maxGroup = 256

// maxYields bounds the yields a group makes for company (loop).
const maxYields = 8

func newGroupWriter(db *DB) *groupWriter {
	w := &groupWriter{db: db, jobs: make(chan *writeJob, 1024), done: make(chan struct{}), stopped: make(chan struct{})}
	go w.loop()
	return w
}

var errClosed = errors.New("database closed")

func (w *groupWriter) submit(ctx context.Context, fn func(q querier) (any, error)) (any, error) {
	return w.enqueue(&writeJob{ctx: ctx, fn: fn, ready: make(chan struct{})})
}

// submitRecord is submit for a job that only records requests.
func (w *groupWriter) submitRecord(ctx context.Context, fn func(q querier) (any, error)) (any, error) {
	return w.enqueue(&writeJob{ctx: ctx, fn: fn, record: true, ready: make(chan struct{})})
}

func (w *groupWriter) enqueue(job *writeJob) (any, error) {
	ctx := job.ctx
	select {
	case w.jobs <- job:
	case <-w.done:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Once queued, the job is answered whatever the context does: a caller
	// must not hear "cancelled" about a row that was in fact committed. A
	// job queued just as the writer stopped (after it drained the queue) is
	// never run: it is answered as closed.
	select {
	case <-job.ready:
	case <-w.stopped:
		select {
		case <-job.ready:
		default:
			return nil, errClosed
		}
	}
	return job.result, job.err
}

// close stops the writer after the group in flight commits.
func (w *groupWriter) close() {
	w.once.Do(func() { close(w.done) })
	<-w.stopped
}

func (w *groupWriter) loop() {
	defer close(w.stopped)
	group := make([]*writeJob, 0, maxGroup)
	prev := 0 // how many jobs the group before this one held
	for {
		select {
		case job := <-w.jobs:
			group = append(group[:0], job)
		case <-w.done:
			// Answer whatever is still queued.
			for {
				select {
				case job := <-w.jobs:
					job.err = errClosed
					close(job.ready)
				default:
					return
				}
			}
		}
		group = w.takeQueued(group)
		// Under concurrency (more than one job was waiting, now or for the
		// group before), company is likely a moment away: the goroutines
		// that will send it (API handlers decoding their requests) are
		// runnable. Yield to them, and take what they queued, while
		// yielding brings jobs: one commit then carries more (a commit
		// costs ~12 WAL frames, two pwrite calls each, whatever it holds).
		// No timer: Go's wakes ~1 ms late when idle, and lingering on one
		// would keep a few clients that wait for their acks waiting on
		// every commit (half their throughput at 2–4 clients). A yield with
		// nothing runnable returns at once, so lone writes and a few
		// clients never wait.
		if len(group) > 1 || prev > 1 {
			for range maxYields {
				if len(group) >= maxGroup {
					break
				}
				runtime.Gosched()
				n := len(group)
				if group = w.takeQueued(group); len(group) == n {
					break
				}
			}
		}
		prev = len(group)
		w.commit(group)
	}
}

// takeQueued adds the jobs already queued to group, up to maxGroup,
// without waiting.
func (w *groupWriter) takeQueued(group []*writeJob) []*writeJob {
	for len(group) < maxGroup {
		select {
		case job := <-w.jobs:
			group = append(group, job)
		default:
			return group
		}
	}
	return group
}

func (w *groupWriter) commit(group []*writeJob) {
	live := group[:0:0]
	for _, j := range group {
		if j.ctx.Err() != nil {
			j.err = j.ctx.Err() // not yet written: safe to say cancelled
			close(j.ready)
			continue
		}
		live = append(live, j)
	}
	if len(live) == 0 {
		return
	}
	if err := w.run(live); err != nil && len(live) > 1 {
		for _, j := range live {
			w.run([]*writeJob{j})
		}
	}
	for _, j := range live {
		close(j.ready)
	}
}

// run executes jobs in one transaction. On any error nothing commits and
// every job carries an error.
func (w *groupWriter) run(jobs []*writeJob) error {
	fail := func(err error) error {
		for _, j := range jobs {
			if j.err == nil {
				j.err = err
			}
			j.result = nil
		}
		return err
	}
	for _, j := range jobs {
		j.err, j.result = nil, nil
	}
	tx, err := w.db.sql.Begin()
	if err != nil {
		return fail(fmt.Errorf("beginning write: %w", err))
	}
	q := w.db.stmts(tx)
	// Recorded requests write their sessions' rows once, before COMMIT
	// and before any other write, which may read them (flushSessions).
	ctx := context.Background() // queued jobs run whatever their callers' contexts do (enqueue)
	for _, j := range jobs {
		if !j.record {
			if err := q.flushSessions(ctx); err != nil {
				tx.Rollback()
				return fail(fmt.Errorf("rolled back with a failing write: %w", err))
			}
		}
		j.result, j.err = j.fn(q)
		if !j.record {
			q.forgetLedgers()
		}
		if j.err != nil {
			tx.Rollback()
			return fail(fmt.Errorf("rolled back with a failing write: %w", j.err))
		}
	}
	if err := q.flushSessions(ctx); err != nil {
		tx.Rollback()
		return fail(fmt.Errorf("rolled back with a failing write: %w", err))
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("committing: %w", err))
	}
	return nil
}
