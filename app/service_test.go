package app

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"testing/fstest"
)

var uiAssets = fstest.MapFS{"index.html": {Data: []byte("<!doctype html><title>tollgate</title>")}}

func startTestService(t *testing.T, home string) *Service {
	t.Helper()
	svc, err := Start(context.Background(), StartOptions{Home: home, Flags: Flags{Listen: "127.0.0.1:0"}, Version: "test", Assets: uiAssets})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestStartPublishesAPIFileAndCleanExitRemovesIt(t *testing.T) {
	home := t.TempDir()
	svc := startTestService(t, home)
	info, err := ReadAPIInfo(home)
	if err != nil {
		t.Fatal(err)
	}
	if info.URL != svc.URL || info.PID != os.Getpid() || len(info.Token) != 64 || info.Version != "test" {
		t.Fatalf("api.json %+v", info)
	}
	for _, name := range []string{"api.json", "token"} {
		st, err := os.Stat(home + "/" + name)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want 0600", name, err, st.Mode().Perm())
		}
	}
	// The listener answers as soon as api.json exists.
	req, _ := http.NewRequest("GET", info.URL+"/v1/health", nil)
	req.Header.Set("Authorization", "Bearer "+info.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"armed":false`) {
		t.Fatalf("health: %d %s", res.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(home + "/api.json"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("api.json still there after a clean exit: %v", err)
	}
}

func TestSecondInstanceOnTheSameHomeFindsTheLiveOne(t *testing.T) {
	home := t.TempDir()
	first := startTestService(t, home)
	defer first.Close(context.Background())
	_, err := Start(context.Background(), StartOptions{Home: home, Flags: Flags{Listen: "127.0.0.1:0"}, Version: "test"})
	var running *AlreadyRunningError
	if !errors.As(err, &running) {
		t.Fatalf("second start: err = %v, want AlreadyRunningError", err)
	}
	if running.Info.URL != first.URL || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second start found %+v (%v), want %s", running.Info, err, first.URL)
	}
	// The token survives restarts.
	tok := first.Token()
	first.Close(context.Background())
	again := startTestService(t, home)
	defer again.Close(context.Background())
	if again.Token() != tok {
		t.Fatal("token changed across a restart")
	}
}

func TestTokenRotationWhileRunning(t *testing.T) {
	home := t.TempDir()
	svc := startTestService(t, home)
	defer svc.Close(context.Background())
	old := svc.Token()
	var out strings.Builder
	if code := RunToken([]string{"--home", home, "--rotate"}, IO{Stdout: &out, Stderr: io.Discard}); code != 0 {
		t.Fatalf("token --rotate exit %d", code)
	}
	fresh := strings.TrimSpace(out.String())
	if fresh == old || len(fresh) != 64 || svc.Token() != fresh {
		t.Fatalf("rotation: old %s new %s live %s", old, fresh, svc.Token())
	}
	info, _ := ReadAPIInfo(home)
	file, _ := os.ReadFile(TokenPath(home))
	if info.Token != fresh || strings.TrimSpace(string(file)) != fresh {
		t.Fatal("api.json or token file not updated")
	}
	req, _ := http.NewRequest("GET", svc.URL+"/v1/health", nil)
	req.Header.Set("Authorization", "Bearer "+old)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %d, want 401", res.StatusCode)
	}
}

func TestLoginPrintsAFreshURL(t *testing.T) {
	home := t.TempDir()
	svc := startTestService(t, home)
	defer svc.Close(context.Background())
	var out, errb strings.Builder
	if code := RunLogin([]string{"--home", home}, IO{Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("login exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(strings.TrimSpace(out.String()), svc.URL+"/login?nonce=") {
		t.Fatalf("login printed %q", out.String())
	}
	// Without a running tollgate it says so.
	out.Reset()
	errb.Reset()
	if code := RunLogin([]string{"--home", t.TempDir()}, IO{Stdout: &out, Stderr: &errb}); code == 0 || !strings.Contains(errb.String(), "not running") {
		t.Fatalf("login without tollgate: %q", errb.String())
	}
}

func TestNonLoopbackListenRefused(t *testing.T) {
	_, err := Start(context.Background(), StartOptions{Home: t.TempDir(), Flags: Flags{Listen: "0.0.0.0:0"}})
	if err == nil || !strings.Contains(err.Error(), "--insecure-listen") {
		t.Fatalf("err = %v", err)
	}
}
