package doctor

import "testing"

// StartService starts a real tollgate on home (app/apptest) for this
// package's tests. The app imports this package, so the link is made from
// app_link_test.go, an external test file that may import the app.
var StartService func(t testing.TB, home, mode string) (url, token string)

// testService is the running tollgate as these tests see it.
type testService struct {
	URL   string
	token string
}

func (s testService) Token() string { return s.token }

func startTestService(t *testing.T, home string) testService {
	t.Helper()
	if StartService == nil {
		t.Fatal("app_link_test.go did not link the app")
	}
	url, token := StartService(t, home, "")
	return testService{URL: url, token: token}
}
