package cli

import (
	"context"

	"tollgate/app/harness"
)

// Ext is `tollgate ext HARNESS`: a harness's extension sidecar, the Ext
// command its integration registers (app/harness).
func Ext(ctx context.Context, args []string, stdio IO, version string) error {
	return runHarness(ctx, extVerb, args, harness.Env{IO: stdio, Version: version})
}

var extVerb = harnessVerb{name: "ext", command: func(in harness.Integration) *harness.Command { return in.Ext }}
