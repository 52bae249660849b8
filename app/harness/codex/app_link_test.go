package codex_test

import (
	"tollgate/app/apptest"
	"tollgate/app/harness/codex"
)

func init() { codex.StartService = apptest.StartService }
