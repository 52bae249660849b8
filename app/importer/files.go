package importer

import (
	"context"
	"io"
	"os"

	"tollgate/app/importer/jsonl"
)

// OpenRegular opens a log for reading, refusing what is not a regular file
// (jsonl.OpenRegular).
func OpenRegular(path string) (*os.File, error) { return jsonl.OpenRegular(path) }

// ContextReader reads r until ctx ends (jsonl.ContextReader).
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return jsonl.ContextReader(ctx, r) }
