package sim_test

import (
	"testing"

	"tollgate/app/apptest"
	"tollgate/app/sim"
)

func init() {
	sim.StartService = func(t testing.TB, mode string) (string, string, string) {
		svc, home := apptest.Start(t, mode)
		return svc.URL, svc.Token(), home
	}
}
