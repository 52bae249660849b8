package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"tollgate/app/apptest"
	"tollgate/app/home"
	"tollgate/guard/client/clienttest"
)

func TestTokenRotationWhileRunning(t *testing.T) {
	svc, dir := apptest.Start(t, "")
	old := svc.Token()
	oldOwner, err := home.ReadOwnerToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if code := Exit(Token(context.Background(), []string{"--home", dir, "--rotate"}, IO{Stdout: &out, Stderr: io.Discard}), io.Discard); code != 0 {
		t.Fatalf("token --rotate exit %d", code)
	}
	fresh := strings.TrimSpace(out.String())
	if fresh == old || len(fresh) != 64 || svc.Token() != fresh {
		t.Fatalf("rotation: old %s new %s live %s", old, fresh, svc.Token())
	}
	info, _ := home.ReadAPIInfo(dir)
	file, _ := os.ReadFile(home.TokenPath(dir))
	if info.Token != fresh || strings.TrimSpace(string(file)) != fresh {
		t.Fatal("api.json or token file not updated")
	}
	if res, _ := clienttest.Do(t, "GET", svc.URL+"/v1/health", old, nil); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("old token after rotation: %d, want 401", res.StatusCode)
	}
	// The owner token is replaced with it, and the command used the old one
	// (the harness token cannot rotate).
	owner, _ := home.ReadOwnerToken(dir)
	if owner == oldOwner || owner != svc.OwnerToken() || len(owner) != 64 || owner == fresh {
		t.Fatalf("owner token: old %s file %s live %s", oldOwner, owner, svc.OwnerToken())
	}
	st, err := os.Stat(home.OwnerTokenPath(dir))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("owner.token: %v %v", err, st)
	}
	if b, _ := os.ReadFile(home.APIFilePath(dir)); strings.Contains(string(b), owner) {
		t.Fatal("api.json holds the owner token")
	}
}

func TestLoginPrintsAFreshURL(t *testing.T) {
	svc, dir := apptest.Start(t, "")
	var out, errb strings.Builder
	if code := Exit(Login(context.Background(), []string{"--home", dir}, IO{Stdout: &out, Stderr: &errb}), &errb); code != 0 {
		t.Fatalf("login exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(strings.TrimSpace(out.String()), svc.URL+"/login?nonce=") {
		t.Fatalf("login printed %q", out.String())
	}
	// Without a running tollgate it says so.
	out.Reset()
	errb.Reset()
	if code := Exit(Login(context.Background(), []string{"--home", t.TempDir()}, IO{Stdout: &out, Stderr: &errb}), &errb); code == 0 || !strings.Contains(errb.String(), "not running") {
		t.Fatalf("login without tollgate: %q", errb.String())
	}
}
