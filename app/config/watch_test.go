package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadWatch(t *testing.T, yaml string) (Watch, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(dir, Flags{})
	if err != nil {
		return Watch{}, err
	}
	return cfg.Watch, nil
}

func TestWatchIsOnUnlessTurnedOff(t *testing.T) {
	home, _ := os.UserHomeDir()
	cases := []struct {
		yaml string
		want Watch
	}{
		{"mode: ask\n", Watch{Enabled: true}},
		{"watch: false\n", Watch{Enabled: false}},
		{"watch: true\n", Watch{Enabled: true}},
		{"watch: {enabled: false}\n", Watch{Enabled: false}},
		{"watch:\n  folders:\n    - {path: /srv/logs, harness: codex}\n    - ~/agent-logs\n", Watch{Enabled: true, Folders: []WatchFolder{
			{Path: "/srv/logs", Harness: "codex"}, {Path: filepath.Join(home, "agent-logs")}}}},
	}
	for _, c := range cases {
		got, err := loadWatch(t, c.yaml)
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if got.Enabled != c.want.Enabled || len(got.Folders) != len(c.want.Folders) {
			t.Errorf("%q: got %+v, want %+v", c.yaml, got, c.want)
			continue
		}
		for i := range got.Folders {
			if got.Folders[i] != c.want.Folders[i] {
				t.Errorf("%q: folder %d = %+v, want %+v", c.yaml, i, got.Folders[i], c.want.Folders[i])
			}
		}
	}
}

func TestWatchFromEnvironment(t *testing.T) {
	t.Setenv("TOLLGATE_WATCH", "false")
	got, err := loadWatch(t, "mode: ask\n")
	if err != nil || got.Enabled {
		t.Fatalf("TOLLGATE_WATCH=false: %+v, %v", got, err)
	}
}

func TestBadWatchNamesTheKey(t *testing.T) {
	cases := map[string]string{
		"watch: sometimes\n":                                   "watch",
		"watch: 3\n":                                           "watch",
		"watch: {enabled: maybe}\n":                            "watch.enabled",
		"watch: {folders: /srv/logs}\n":                        "watch.folders",
		"watch: {follow: true}\n":                              "watch.follow",
		"watch: {folders: [{path: relative/logs}]}\n":          "watch.folders[0].path",
		"watch: {folders: [{harness: codex}]}\n":               "watch.folders[0].path",
		"watch: {folders: [/a, {path: /b, harness: vim}]}\n":   "watch.folders[1].harness",
		"watch: {folders: [{path: /a, harness: codex, x: 1}]}": "watch.folders[0].x",
		"watch: {folders: [7]}\n":                              "watch.folders[0]",
		// Too wide to watch folder by folder (inotify watches run out).
		"watch: {folders: [/]}\n":           "watch.folders[0].path",
		"watch: {folders: [/tmp, \"~\"]}\n": "watch.folders[1].path",
	}
	for yaml, key := range cases {
		_, err := loadWatch(t, yaml)
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%q: got %v, want a ConfigError", yaml, err)
			continue
		}
		if ce.Key != key || !strings.Contains(err.Error(), "config.yaml") {
			t.Errorf("%q: error %q names key %q, want %q", yaml, err, ce.Key, key)
		}
	}
}
