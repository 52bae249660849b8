// Package apptest starts a real tollgate (the composition root on a
// t.TempDir home, a real SQLite file and a loopback listener) for the tests
// of the rooms that talk to one: the harness integrations, the simulator,
// the commands. Only tests import it.
package apptest

import (
	"context"
	"testing"
	"testing/fstest"
	"time"

	"tollgate/app"
	"tollgate/app/config"
)

// UIAssets stand in for the built frontend: the API tests need a page, not
// the dashboard.
var UIAssets = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>tollgate</title>")}}

// Start starts a tollgate in mode ("" = the config's default) on a fresh
// home, closed when the test ends. It returns the service and its home.
func Start(t testing.TB, mode string) (*app.Service, string) {
	t.Helper()
	home := t.TempDir()
	return StartOn(t, home, mode), home
}

// StartOn starts a tollgate on home, closed when the test ends.
func StartOn(t testing.TB, home, mode string) *app.Service {
	t.Helper()
	return StartWith(t, home, config.Flags{Listen: "127.0.0.1:0", Mode: mode})
}

// StartWith starts a tollgate on home with the command-line flags a test
// needs (Listen included: "127.0.0.1:0" picks a free port), closed when the
// test ends.
func StartWith(t testing.TB, home string, flags config.Flags) *app.Service {
	t.Helper()
	svc, err := app.Start(context.Background(), app.StartOptions{Home: home, Flags: flags, Version: "test", Assets: UIAssets})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		svc.Close(ctx)
	})
	return svc
}

// StartService is Start as a clienttest.Starter: what the rooms' link
// files hand their tests.
func StartService(t testing.TB, mode string) (url, token, home string) {
	svc, home := Start(t, mode)
	return svc.URL, svc.Token(), home
}
