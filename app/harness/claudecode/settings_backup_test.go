package claudecode

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Installing the hook, then the telemetry, then removing the telemetry
// keeps every earlier settings.json: the user's own from before tollgate
// stays in settings.json.tollgate-backup, each later change goes to the
// next numbered backup. The telemetry block holds the harness token, so
// the file and its later backups are readable by their owner only.
func TestSettingsBackupsKeepTheUsersOwnAndTheTokenPrivate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	own := `{"model":"opus"}` + "\n"
	if err := os.WriteFile(path, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Install(InstallOptions{Settings: path, Timeout: 240 * time.Second})
	if err != nil || res.Backup != path+".tollgate-backup" {
		t.Fatalf("install: %+v %v", res, err)
	}
	withHook, _ := os.ReadFile(path)
	backup, err := InstallTelemetry(path, TelemetryEnv("http://127.0.0.1:1", "secret-token", "http/json"))
	if err != nil || backup != path+".tollgate-backup.1" {
		t.Fatalf("telemetry: %q %v", backup, err)
	}
	if _, backup, err = UninstallTelemetry(path); err != nil || backup != path+".tollgate-backup.2" {
		t.Fatalf("uninstall telemetry: %q %v", backup, err)
	}
	for name, want := range map[string]string{".tollgate-backup": own, ".tollgate-backup.1": string(withHook)} {
		if b, _ := os.ReadFile(path + name); string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
	for name, want := range map[string]os.FileMode{"": 0o600, ".tollgate-backup": 0o644, ".tollgate-backup.1": 0o600, ".tollgate-backup.2": 0o600} {
		if fi, err := os.Stat(path + name); err != nil || fi.Mode().Perm() != want {
			t.Errorf("settings.json%s: mode %v (%v), want %v", name, fi.Mode().Perm(), err, want)
		}
	}
}

// Past maxBackups, the last numbered backup is written over: the user's
// own and the others stay.
func TestSettingsBackupsAreBounded(t *testing.T) {
	base := filepath.Join(t.TempDir(), "s.json.tollgate-backup")
	for n := 0; n < maxBackups+2; n++ {
		if _, err := writeBackup(base, []byte{byte(n)}, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(base); len(b) != 1 || b[0] != 0 {
		t.Fatalf("the first backup was written over: %v", b)
	}
	matches, _ := filepath.Glob(base + "*")
	if len(matches) != maxBackups {
		t.Fatalf("%d backups, want %d", len(matches), maxBackups)
	}
}
