// Package home is a tollgate home's files: where the home is, its token, the
// instance lock, the discovery file api.json and the integrations' markers.
// Harness integrations read it to find tollgate; nothing here starts one.
package home

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ResolveHome picks the tollgate home: the --home flag, else $TOLLGATE_HOME,
// else os.UserConfigDir()/tollgate.
func ResolveHome(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if env := os.Getenv("TOLLGATE_HOME"); env != "" {
		return filepath.Abs(env)
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the config directory (set --home or TOLLGATE_HOME): %w", err)
	}
	return filepath.Join(dir, "tollgate"), nil
}

// TokenPath is where the API bearer token lives.
func TokenPath(home string) string { return filepath.Join(home, "token") }

// OwnerTokenPath is where the owner token lives (0600; never in api.json):
// it answers questions, changes modes and settings, deletes, re-prices,
// rotates tokens and mints login URLs, which the harness token cannot.
func OwnerTokenPath(home string) string { return filepath.Join(home, "owner.token") }

// LoadOrCreateOwnerToken returns the owner token, creating it on first use.
func LoadOrCreateOwnerToken(home string) (string, error) {
	return loadOrCreate(home, OwnerTokenPath(home))
}

// ReadOwnerToken reads the owner token without creating it.
func ReadOwnerToken(home string) (string, error) {
	b, err := os.ReadFile(OwnerTokenPath(home))
	if err != nil {
		return "", fmt.Errorf("reading the owner token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// RotateOwnerToken replaces the owner token with a fresh one.
func RotateOwnerToken(home string) (string, error) { return rotate(home, OwnerTokenPath(home)) }

// APIFilePath is the discovery file harnesses read.
func APIFilePath(home string) string { return filepath.Join(home, "api.json") }

// DBPath is the SQLite database of a home.
func DBPath(home string) string { return filepath.Join(home, "tollgate.db") }

// LoadOrCreateToken returns the token kept in <home>/token, creating it (32
// random bytes, hex) on first use. The token survives restarts so harnesses
// configured with it keep working.
func LoadOrCreateToken(home string) (string, error) { return loadOrCreate(home, TokenPath(home)) }

func loadOrCreate(home, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) == 64 {
			if _, err := hex.DecodeString(tok); err == nil {
				return tok, nil
			}
		}
		return "", fmt.Errorf("token file %s is corrupt (want 64 hex characters); run `tollgate token --rotate`", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading token: %w", err)
	}
	return rotate(home, path)
}

// RotateToken replaces the token with a fresh one. Clients holding the old
// token get 401 from then on; browser cookies derived from it stop working.
func RotateToken(home string) (string, error) { return rotate(home, TokenPath(home)) }

func rotate(home, path string) (string, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("creating home: %w", err)
	}
	tok, err := randomHex(32)
	if err != nil {
		return "", err
	}
	if err := WriteFileAtomic(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("writing token: %w", err)
	}
	return tok, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// APIInfo is the content of <home>/api.json.
type APIInfo struct {
	URL     string `json:"url"`
	Token   string `json:"token"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// Desktop is true when the process owns a window that can be raised.
	Desktop bool `json:"desktop,omitempty"`
}

// WriteAPIInfo writes api.json atomically with mode 0600: a reader sees the
// old file or the whole new one, never half of it.
func WriteAPIInfo(home string, info APIInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(APIFilePath(home), append(b, '\n'), 0o600)
}

// ReadAPIInfo reads api.json; fs.ErrNotExist when no tollgate has written one.
func ReadAPIInfo(home string) (APIInfo, error) {
	var info APIInfo
	b, err := os.ReadFile(APIFilePath(home))
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s: %w", APIFilePath(home), err)
	}
	return info, nil
}

// RemoveAPIInfo removes api.json if it still names this process, so a clean
// exit never deletes the file of a newer instance.
func RemoveAPIInfo(home string, pid int) {
	info, err := ReadAPIInfo(home)
	if err == nil && info.PID != pid {
		return
	}
	_ = os.Remove(APIFilePath(home))
}

// ProcessAlive reports whether pid names a running process.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// AlreadyRunningError says another tollgate owns this home.
type AlreadyRunningError struct {
	Info APIInfo
}

func (e *AlreadyRunningError) Error() string {
	if e.Info.URL == "" {
		return "another tollgate is starting on this home"
	}
	return fmt.Sprintf("tollgate is already running on this home (pid %d, %s)", e.Info.PID, e.Info.URL)
}

// Lock takes the home's instance lock, or explains who holds it.
func Lock(home string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(home, "tollgate.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening instance lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			// The holder writes api.json once it listens; give it a moment.
			var info APIInfo
			for i := 0; i < 50; i++ {
				if info, err = ReadAPIInfo(home); err == nil && ProcessAlive(info.PID) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			return nil, &AlreadyRunningError{Info: info}
		}
		return nil, fmt.Errorf("locking home: %w", err)
	}
	return f, nil
}

// LiveInstance finds the tollgate running on home, if any, and checks it
// answers with the token api.json names.
func LiveInstance(home string) (APIInfo, error) {
	info, err := ReadAPIInfo(home)
	if errors.Is(err, fs.ErrNotExist) {
		return info, fmt.Errorf("tollgate is not running on %s (no api.json): start it with `tollgate` or `tollgate serve`", home)
	}
	if err != nil {
		return info, err
	}
	if !ProcessAlive(info.PID) {
		return info, fmt.Errorf("tollgate is not running on %s (api.json names pid %d, which has exited)", home, info.PID)
	}
	return info, nil
}

// ---- markers: what a hook or sidecar last did ----

// Marker is <home>/integrations/<name>.json.
type Marker struct {
	At           time.Time `json:"at"`
	LastDecision string    `json:"lastDecision,omitempty"` // e.g. "decline (user)"
	Version      string    `json:"version,omitempty"`      // the harness's version, when known
	// From is the file a plugin ran from (OpenCode's index.js), when it
	// says: a plugin last seen from a file that is gone is not installed.
	From string `json:"from,omitempty"`
}

func MarkerPath(home, name string) string {
	return filepath.Join(home, "integrations", name+".json")
}

// WriteMarker records an integration's last decision (best
// effort: a read-only home only loses the Integrations page's line).
func WriteMarker(home, name string, m Marker) error {
	if home == "" {
		return errors.New("no tollgate home")
	}
	if err := os.MkdirAll(filepath.Join(home, "integrations"), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return WriteFileAtomic(MarkerPath(home, name), b, 0o600)
}

func ReadMarker(home, name string) (Marker, error) {
	var m Marker
	b, err := os.ReadFile(MarkerPath(home, name))
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(b, &m)
	return m, err
}

// HarnessDir is a harness's own folder: $envVar when set, else ~/dotDir
// ($HOME as the harness itself would read it).
func HarnessDir(getenv func(string) string, envVar, dotDir string) (string, error) {
	if d := getenv(envVar); d != "" {
		return d, nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		home = h
	}
	return filepath.Join(home, dotDir), nil
}

// Probe is what the integrations' status checks read: the tollgate home
// (markers), this binary (hooks must run it) and the environment, as a
// harness would read it. Tests inject their own.
type Probe struct {
	Home   string
	Self   string
	Getenv func(string) string
}

// VerifyCommand checks that a hook's command line starts with an
// executable that resolves, and that it is this tollgate binary.
func VerifyCommand(command, self string) (string, error) {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return "", errors.New("empty command")
	}
	exe := strings.Trim(fields[0], `"'`)
	resolved, err := exec.LookPath(exe)
	if err != nil {
		return "", fmt.Errorf("the command does not resolve: %w", err)
	}
	if self != "" && !SameFile(resolved, self) {
		return resolved, fmt.Errorf("it runs %s, not this tollgate (%s)", resolved, self)
	}
	return resolved, nil
}

// SameFile reports whether two paths name the same file.
func SameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

// ShellQuote quotes a word for a POSIX shell: the commands tollgate writes
// into a harness's settings and the fixes it prints.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:=@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
