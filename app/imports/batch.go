package imports

import (
	"context"

	"tollgate/app/config"
	"tollgate/storage/sqlite"
)

// Batch imports files in several Files calls that share what one call
// learned for the fold predictions (the logs' traces, while a file
// is unchanged): the follower's history goes in small calls so the gate's
// writes never wait long, and without a shared cache each call would
// decode a project's earlier sessions again (app/follow).
type Batch struct{ traces *traceCaches }

// NewBatch starts a batch; drop it when the calls are done, to free its
// traces.
func NewBatch() *Batch { return &Batch{traces: &traceCaches{}} }

// Files is Files with the batch's traces.
func (b *Batch) Files(ctx context.Context, db *sqlite.DB, settings *config.Settings, files []Source, progress func(Progress)) (Result, error) {
	return filesWith(ctx, db, settings, files, progress, b.traces)
}
