package sim

import "testing"

// StartService starts a real tollgate (app/apptest) for this package's
// tests. The app imports this package, so the link is made from
// app_link_test.go, an external test file that may import the app.
var StartService func(t testing.TB, mode string) (url, token, home string)

// testService is the running tollgate as these tests see it.
type testService struct {
	URL   string
	token string
}

func (s testService) Token() string { return s.token }

func startModeService(t *testing.T, mode string) (testService, string) {
	t.Helper()
	if StartService == nil {
		t.Fatal("app_link_test.go did not link the app")
	}
	url, token, home := StartService(t, mode)
	return testService{URL: url, token: token}, home
}
