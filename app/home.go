package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// APIFilePath is the discovery file harnesses read.
func APIFilePath(home string) string { return filepath.Join(home, "api.json") }

// DBPath is the SQLite database of a home.
func DBPath(home string) string { return filepath.Join(home, "tollgate.db") }

// LoadOrCreateToken returns the token kept in <home>/token, creating it (32
// random bytes, hex) on first use. The token survives restarts so harnesses
// configured with it keep working.
func LoadOrCreateToken(home string) (string, error) {
	b, err := os.ReadFile(TokenPath(home))
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) == 64 {
			if _, err := hex.DecodeString(tok); err == nil {
				return tok, nil
			}
		}
		return "", fmt.Errorf("token file %s is corrupt (want 64 hex characters); run `tollgate token --rotate`", TokenPath(home))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading token: %w", err)
	}
	return RotateToken(home)
}

// RotateToken replaces the token with a fresh one. Clients holding the old
// token get 401 from then on; browser cookies derived from it stop working.
func RotateToken(home string) (string, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("creating home: %w", err)
	}
	tok, err := randomHex(32)
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(TokenPath(home), []byte(tok+"\n"), 0o600); err != nil {
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
	return writeFileAtomic(APIFilePath(home), append(b, '\n'), 0o600)
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

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
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
