package claudecode_test

import (
	"testing"

	"tollgate/app/apptest"
	"tollgate/app/harness/claudecode"
)

func init() {
	claudecode.StartService = func(t testing.TB, mode string) (string, string, string) {
		svc, home := apptest.Start(t, mode)
		return svc.URL, svc.Token(), home
	}
}
