package doctor_test

import (
	"testing"

	"tollgate/app/apptest"
	"tollgate/app/doctor"
)

func init() {
	doctor.StartService = func(t testing.TB, home, mode string) (string, string) {
		svc := apptest.StartOn(t, home, mode)
		return svc.URL, svc.Token()
	}
}
