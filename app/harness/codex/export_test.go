package codex

import "tollgate/guard/client/clienttest"

// StartService starts a real tollgate for this package's tests; the app
// imports this package (through app/harness), so app_link_test.go sets it.
var StartService clienttest.Starter
