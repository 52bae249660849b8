package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFirstRunWritesCommentedDefaults(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(dir, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Loopback address", "listen: 127.0.0.1:47631", "askTimeout: 120s", "mode: ask", "pricePerMTokens"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("default config lacks %q", want)
		}
	}
	if cfg.Listen != DefaultListen || cfg.AskTimeout != 120*time.Second || cfg.Mode != ModeAsk || cfg.DefaultProfile != "deepseek-flash" {
		t.Errorf("defaults %+v", cfg)
	}
	if _, ok := cfg.Profiles["deepseek-flash"]; !ok {
		t.Errorf("default profile missing: %v", cfg.Profiles)
	}
	if st, _ := os.Stat(filepath.Join(dir, "config.yaml")); st.Mode().Perm() != 0o600 {
		t.Errorf("config.yaml mode %v, want 0600", st.Mode().Perm())
	}
}

func TestEnvOverridesFileAndFlagsOverrideEnv(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("mode: ask\naskTimeout: 30s\nlisten: 127.0.0.1:5000\n"), 0o600)
	t.Setenv("TOLLGATE_MODE", "auto")
	t.Setenv("TOLLGATE_ASKTIMEOUT", "45s")
	cfg, err := LoadConfig(dir, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "auto" || cfg.AskTimeout != 45*time.Second || cfg.Listen != "127.0.0.1:5000" {
		t.Fatalf("env override: %+v", cfg)
	}
	cfg, err = LoadConfig(dir, Flags{Mode: "off", Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != "off" || cfg.Listen != "127.0.0.1:0" {
		t.Fatalf("flag override: %+v", cfg)
	}
}

func TestInvalidValueNamesKeyValueAndFile(t *testing.T) {
	cases := []struct {
		name, yaml, env, wantKey, wantValue string
	}{
		{"mode", "mode: sometimes\n", "", "mode", "sometimes"},
		{"askTimeout", "askTimeout: 12x\n", "", "askTimeout", "12x"},
		{"askTimeout negative", "askTimeout: -5s\n", "", "askTimeout", "-5s"},
		{"listen", "listen: nowhere\n", "", "listen", "nowhere"},
		{"env mode", "mode: ask\n", "never", "mode", "never"},
		{"price", "profiles:\n  p:\n    pricePerMTokens: cheap\n", "", "profiles.p.pricePerMTokens", "cheap"},
		{"negative price", "profiles:\n  p:\n    outputPricePerMTokens: -1\n", "", "profiles.p.outputPricePerMTokens", "-1"},
		{"granularity", "profiles:\n  p:\n    granularity: 0\n", "", "profiles.p.granularity", "0"},
		{"cacheKind", "profiles:\n  p:\n    cacheKind: magic\n", "", "profiles.p.cacheKind", "magic"},
		{"profile mode", "profiles:\n  p:\n    mode: maybe\n", "", "profiles.p.mode", "maybe"},
		{"price overflowing every cost", "profiles:\n  p:\n    pricePerMTokens: 1e308\n", "", "profiles.p.pricePerMTokens", "1e+308"},
		{"offPeak factor", "profiles:\n  p:\n    offPeak: {days: [mon-fri], utc: [\"00:00-01:00\"], factor: -3}\n", "", "profiles.p.offPeak.factor", "must be > 0"},
		{"offPeak day", "profiles:\n  p:\n    offPeak: {days: [funday], factor: 0.5}\n", "", "profiles.p.offPeak.days[0]", "funday"},
		{"default profile", "defaultProfile: ghost\nprofiles: {}\n", "", "defaultProfile", "ghost"},
		{"yaml", "mode: [unclosed\n", "", "(file)", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "config.yaml")
			os.WriteFile(file, []byte(tc.yaml), 0o600)
			if tc.env != "" {
				t.Setenv("TOLLGATE_MODE", tc.env)
			}
			_, err := LoadConfig(dir, Flags{})
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a ConfigError", err)
			}
			msg := err.Error()
			if ce.Key != tc.wantKey || !strings.Contains(msg, tc.wantKey) || !strings.Contains(msg, tc.wantValue) || !strings.Contains(msg, file) {
				t.Fatalf("message %q: want key %q, value %q and file %q", msg, tc.wantKey, tc.wantValue, file)
			}
		})
	}
}

func TestSettingsEditsKeepCommentsSpellingAndUnknownKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	src := `# my notes
mode: ask # global
futureKey: keep me
profiles:
  Mine:
    provider: deepseek
    model: deepseek-flash
    pricePerMTokens: 0.30 # what I pay
    someFutureKnob: 7
`
	os.WriteFile(file, []byte(src), 0o600)
	cfg, err := LoadConfig(dir, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	s := NewSettings(cfg)
	if err := s.SetProfileKeys("mine", map[string]any{"pricePerMTokens": 0.25, "outputPricePerMTokens": 1.1}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGlobalMode("auto"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	got := string(b)
	for _, want := range []string{"# my notes", "# global", "futureKey: keep me", "Mine:", "pricePerMTokens: 0.25 # what I pay", "someFutureKnob: 7", "outputPricePerMTokens: 1.1", "mode: auto"} {
		if !strings.Contains(got, want) {
			t.Errorf("after edit the file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "pricepermtokens") {
		t.Errorf("key spelling lost:\n%s", got)
	}
	// The file still loads and the live settings match it.
	cfg2, err := LoadConfig(dir, Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg2.Mode != "auto" || s.GlobalMode() != "auto" {
		t.Fatalf("mode: file %q live %q", cfg2.Mode, s.GlobalMode())
	}
	// An invalid edit changes nothing.
	before, _ := os.ReadFile(file)
	if err := s.SetProfileKeys("mine", map[string]any{"pricePerMTokens": 0.5, "granularity": -3}); err == nil || !strings.Contains(err.Error(), "profiles.mine.granularity") {
		t.Fatalf("invalid edit: err = %v", err)
	}
	after, _ := os.ReadFile(file)
	if string(before) != string(after) {
		t.Fatal("a failed edit changed the file")
	}
}
