package sim_test

import (
	"tollgate/app/apptest"
	"tollgate/app/sim"
)

func init() { sim.StartService = apptest.StartService }
