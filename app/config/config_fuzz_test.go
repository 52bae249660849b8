package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadConfig: config.yaml is outside input. Whatever it holds, loading
// never panics, and a refusal names the file; an accepted file survives a
// node-level edit that keeps it loadable.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte(defaultConfigYAML))
	f.Add([]byte("mode: auto\naskTimeout: 30s\n"))
	f.Add([]byte("profiles:\n  p:\n    pricePerMTokens: 1\n    offPeak: {days: [mon-fri], utc: [\"00:00-01:00\"], factor: 0.5}\n"))
	f.Add([]byte("profiles: [1, 2]\n"))
	f.Add([]byte("mode: [unclosed\n"))
	f.Add([]byte("listen: 127.0.0.1:0\ndefaultProfile: ghost\n"))
	f.Add([]byte("askTimeout: 1e400\n"))
	f.Add([]byte("watch: false\n"))
	f.Add([]byte("watch:\n  enabled: true\n  folders:\n    - {path: ~/logs, harness: codex}\n    - /srv/x\n"))
	f.Add([]byte("watch: {folders: [{path: rel, harness: [1]}, 3]}\n"))
	f.Fuzz(func(t *testing.T, yaml []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(file, yaml, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(dir, Flags{})
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("refusal %q does not name the file", err)
			}
			return
		}
		s := NewSettings(cfg)
		if err := s.SetProfileKeys("fuzzed", map[string]any{"pricePerMTokens": 0.5}); err != nil {
			return // e.g. profiles: is not a map: refused without writing
		}
		if _, err := LoadConfig(dir, Flags{}); err != nil {
			t.Fatalf("an accepted config no longer loads after an edit: %v\nbefore:\n%s", err, yaml)
		}
	})
}
