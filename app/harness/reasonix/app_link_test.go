package reasonix_test

import (
	"tollgate/app/apptest"
	"tollgate/app/harness/reasonix"
)

func init() { reasonix.StartService = apptest.StartService }
