package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// groupWriter commits concurrent small writes together. SQLite has one
// writer at a time; a transaction per API call would spend most of its time
// on BEGIN/COMMIT and WAL appends. Calls queue here, and one goroutine runs
// as many as are waiting (up to maxGroup) in a single transaction. Each job
// runs in a SAVEPOINT, so one job's error rolls back only that job; callers
// are answered only after the COMMIT that holds their rows.
//
// Idle cost is nil: a lone call is committed at once, without waiting for
// company.
type groupWriter struct {
	db      *sql.DB
	jobs    chan *writeJob
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

type writeJob struct {
	ctx    context.Context
	fn     func(*sql.Tx) (any, error)
	result any
	err    error
	ready  chan struct{}
}

const maxGroup = 256

func newGroupWriter(db *sql.DB) *groupWriter {
	w := &groupWriter{db: db, jobs: make(chan *writeJob, 1024), done: make(chan struct{}), stopped: make(chan struct{})}
	go w.loop()
	return w
}

var errClosed = errors.New("database closed")

func (w *groupWriter) submit(ctx context.Context, fn func(*sql.Tx) (any, error)) (any, error) {
	job := &writeJob{ctx: ctx, fn: fn, ready: make(chan struct{})}
	select {
	case w.jobs <- job:
	case <-w.done:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Once queued, the job is answered whatever the context does: a caller
	// must not hear "cancelled" about a row that was in fact committed.
	<-job.ready
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
	drain:
		for len(group) < maxGroup {
			select {
			case job := <-w.jobs:
				group = append(group, job)
			default:
				break drain
			}
		}
		w.commit(group)
	}
}

func (w *groupWriter) commit(group []*writeJob) {
	fail := func(err error) {
		for _, j := range group {
			if j.err == nil {
				j.err = err
			}
			j.result = nil
			close(j.ready)
		}
	}
	tx, err := w.db.Begin()
	if err != nil {
		fail(fmt.Errorf("beginning write: %w", err))
		return
	}
	for i, j := range group {
		if j.ctx.Err() != nil {
			j.err = j.ctx.Err() // not yet written: safe to say cancelled
			continue
		}
		sp := fmt.Sprintf("job%d", i)
		if _, err := tx.Exec("SAVEPOINT " + sp); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("savepoint: %w", err))
			return
		}
		j.result, j.err = j.fn(tx)
		if j.err != nil {
			if _, err := tx.Exec("ROLLBACK TO " + sp); err != nil {
				tx.Rollback()
				fail(fmt.Errorf("rolling back one write: %w", err))
				return
			}
		}
		if _, err := tx.Exec("RELEASE " + sp); err != nil {
			tx.Rollback()
			fail(fmt.Errorf("release: %w", err))
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(fmt.Errorf("committing: %w", err))
		return
	}
	for _, j := range group {
		close(j.ready)
	}
}
