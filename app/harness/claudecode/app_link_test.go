package claudecode_test

import (
	"tollgate/app/apptest"
	"tollgate/app/harness/claudecode"
)

func init() { claudecode.StartService = apptest.StartService }
