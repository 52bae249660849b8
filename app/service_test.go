package app

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"tollgate/app/config"
	"tollgate/app/home"
	"tollgate/guard/client/clienttest"

	"testing/fstest"
)

var uiAssets = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>tollgate</title>")}}

func startTestService(t *testing.T, dir string) *Service {
	t.Helper()
	svc, err := Start(context.Background(), StartOptions{Home: dir, Flags: config.Flags{Listen: "127.0.0.1:0"}, Version: "test", Assets: uiAssets})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestStartPublishesAPIFileAndCleanExitRemovesIt(t *testing.T) {
	dir := t.TempDir()
	svc := startTestService(t, dir)
	info, err := home.ReadAPIInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.URL != svc.URL || info.PID != os.Getpid() || len(info.Token) != 64 || info.Version != "test" {
		t.Fatalf("api.json %+v", info)
	}
	for _, name := range []string{"api.json", "token", "owner.token"} {
		st, err := os.Stat(dir + "/" + name)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want 0600", name, err, st.Mode().Perm())
		}
	}
	// The listener answers as soon as api.json exists.
	res, body := clienttest.Do(t, "GET", info.URL+"/v1/health", info.Token, nil)
	if res.StatusCode != 200 || !strings.Contains(string(body), `"armed":false`) {
		t.Fatalf("health: %d %s", res.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir + "/api.json"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("api.json still there after a clean exit: %v", err)
	}
}

func TestSecondInstanceOnTheSameHomeFindsTheLiveOne(t *testing.T) {
	dir := t.TempDir()
	first := startTestService(t, dir)
	defer first.Close(context.Background())
	_, err := Start(context.Background(), StartOptions{Home: dir, Flags: config.Flags{Listen: "127.0.0.1:0"}, Version: "test"})
	var running *home.AlreadyRunningError
	if !errors.As(err, &running) {
		t.Fatalf("second start: err = %v, want home.AlreadyRunningError", err)
	}
	if running.Info.URL != first.URL || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second start found %+v (%v), want %s", running.Info, err, first.URL)
	}
	// The token survives restarts.
	tok := first.Token()
	first.Close(context.Background())
	again := startTestService(t, dir)
	defer again.Close(context.Background())
	if again.Token() != tok {
		t.Fatal("token changed across a restart")
	}
}

func TestNonLoopbackListenRefused(t *testing.T) {
	_, err := Start(context.Background(), StartOptions{Home: t.TempDir(), Flags: config.Flags{Listen: "0.0.0.0:0"}})
	if err == nil || !strings.Contains(err.Error(), "--insecure-listen") {
		t.Fatalf("err = %v", err)
	}
}

// A connection that was opened and never sent a request does not hold
// Close: Shutdown gets about a second, then what is left is closed.
func TestCloseDoesNotWaitForAnIdleConnection(t *testing.T) {
	svc := startTestService(t, t.TempDir())
	conn, err := net.Dial("tcp", strings.TrimPrefix(svc.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The old Close waited for its whole context (5 s in every caller).
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("Close took %v with an idle connection open", took)
	}
}
