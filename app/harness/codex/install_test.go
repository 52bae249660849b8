package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"tollgate/app/home"
)

// The hash of a hook that the real Codex 0.171.0 ran once config.toml
// trusted it by this value (PreCompact, matcher "auto", timeout 30,
// command /tmp/cx15a/hook.sh; 2026-12-01). The second one is computed by
// Codex's algorithm with Python's json (sorted keys, compact, UTF-8
// unescaped) for a command with characters Go's encoder would escape by
// default.
func TestTrustHashIsCodexs(t *testing.T) {
	auto := "auto"
	if got := trustHash("pre_compact", &auto, "/tmp/cx15a/hook.sh", 30); got != "sha256:e40ee7a4c9cdc6ad60bf24c61e1a6333deaeeea8cfe0af282d33c27c47edf9e4" {
		t.Fatalf("verified hash: got %s", got)
	}
	if got := trustHash("post_compact", nil, "'/opt/tollgate é' hook codex --timeout 300 --home '/a&b<c>'", 300); got != "sha256:bf018fa5b64ffe5ff3d43dd2e4e228184595353ca161538e84872f47da9f233b" {
		t.Fatalf("escaping: got %s", got)
	}
	if checkHashable("a\u2028b") == nil || checkHashable("tollgate\x01") == nil || checkHashable("/usr/bin/tollgate hook codex") != nil {
		t.Fatal("checkHashable")
	}
}

// fakeExe is a file standing for this tollgate binary.
func fakeExe(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "tollgate")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func probe(codexDir, self string) home.Probe {
	return home.Probe{Home: "", Self: self, Getenv: func(k string) string {
		if k == "CODEX_HOME" {
			return codexDir
		}
		return ""
	}}
}

const userHooks = `{
  "hooks": {
    "PreCompact": [
      {"matcher": "manual", "hooks": [{"type": "command", "command": "/usr/local/bin/save-notes", "timeout": 10}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "x-note": "kept"
}
`

const userConfig = `# my Codex settings
model = "gpt-5.5"  # the default

[hooks.state."HOOKS:pre_compact:0:0"]
trusted_hash = "sha256:mine"

[profiles.fast]
model = "gpt-5.4-mini"
`

func TestInstallKeepsTheUsersHooksAndTrustsOnlyOurs(t *testing.T) {
	dir, exe, hooksPath, configPath := usersCodex(t)

	if s := Status(probe(dir, exe)); s.Installed || !strings.Contains(s.Detail, "not installed") {
		t.Fatalf("before: %+v", s)
	}
	res, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Home: "/th", Timeout: 240 * time.Second})
	if err != nil || !res.Changed || res.Seconds != 240 {
		t.Fatalf("install: %+v %v", res, err)
	}
	f, err := readHooksFile(hooksPath)
	if err != nil {
		t.Fatal(err)
	}
	if f["x-note"] != "kept" {
		t.Fatalf("unknown key lost: %v", f)
	}
	keys := tollgateKeys(hooksPath, f)
	if len(keys) != 2 || keys[0].key != hooksPath+":pre_compact:1:0" || keys[1].key != hooksPath+":post_compact:0:0" || keys[0].timeout != 240 {
		t.Fatalf("keys %+v", keys)
	}
	if !strings.HasPrefix(keys[0].command, exe+" hook codex --timeout 240 --home /th") {
		t.Fatalf("command %q", keys[0].command)
	}
	events := f["hooks"].(map[string]any)
	if pre := events["PreCompact"].([]any); len(pre) != 2 || !strings.Contains(mustJSON(pre[0]), "save-notes") {
		t.Fatalf("the user's PreCompact hook moved: %v", pre)
	}
	if _, ok := events["Stop"]; !ok {
		t.Fatal("the user's Stop hook is gone")
	}
	b, _ := os.ReadFile(configPath)
	text := string(b)
	for _, want := range []string{"# my Codex settings", `model = "gpt-5.5"  # the default`, "[profiles.fast]", `trusted_hash = "sha256:mine"`, keys[0].hash, keys[1].hash} {
		if !strings.Contains(text, want) {
			t.Fatalf("config.toml lacks %q:\n%s", want, text)
		}
	}
	if fi, _ := os.Stat(configPath); fi.Mode().Perm() != 0o640 {
		t.Fatalf("config.toml mode %v", fi.Mode())
	}
	if s := Status(probe(dir, exe)); !s.Installed || !s.Verified || !strings.Contains(s.Note, "ends the current Codex turn") || strings.Contains(s.Detail, "ends the") {
		t.Fatalf("after install: %+v", s)
	}

	// Idempotent.
	if res, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Home: "/th", Timeout: 240 * time.Second}); err != nil || res.Changed {
		t.Fatalf("second install: %+v %v", res, err)
	}
	// Another timeout replaces ours and its trust: one group, one table each.
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Home: "/th", Timeout: 100 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(configPath)
	if n := strings.Count(string(b), "[hooks.state."); n != 3 || strings.Contains(string(b), keys[0].hash) || strings.Count(string(b), trustComment) != 2 {
		t.Fatalf("after reinstall, %d trust tables:\n%s", n, b)
	}
	if s := Status(probe(dir, exe)); !s.Verified || !strings.Contains(s.Detail, "timeout 100s") {
		t.Fatalf("after reinstall: %+v", s)
	}

	// A hook the user adds after tollgate's keeps its place (and its trust
	// key) when tollgate is installed again: tollgate's handler is
	// replaced where it is.
	f, _ = readHooksFile(hooksPath)
	pre := f["hooks"].(map[string]any)["PreCompact"].([]any)
	f["hooks"].(map[string]any)["PreCompact"] = append(pre, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "/usr/local/bin/later"}}})
	b, _ = marshalHooks(f)
	os.WriteFile(hooksPath, b, 0o644)
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Home: "/th", Timeout: 90 * time.Second}); err != nil {
		t.Fatal(err)
	}
	f, _ = readHooksFile(hooksPath)
	pre = f["hooks"].(map[string]any)["PreCompact"].([]any)
	if len(pre) != 3 || !strings.Contains(mustJSON(pre[1]), "hook codex --timeout 90") || !strings.Contains(mustJSON(pre[2]), "/usr/local/bin/later") {
		t.Fatalf("reinstall moved hooks: %s", mustJSON(pre))
	}

	// Untrusted (the user removed the trust, or Codex renumbered it): installed, not verified.
	os.WriteFile(configPath, []byte(userConfig), 0o640)
	if s := Status(probe(dir, exe)); !s.Installed || s.Verified || !strings.Contains(s.Detail, "not trusted") {
		t.Fatalf("untrusted: %+v", s)
	}
	// Another binary: installed, not verified.
	Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: 100 * time.Second})
	if s := Status(probe(dir, fakeExe(t))); !s.Installed || s.Verified {
		t.Fatalf("another binary: %+v", s)
	}

	// Uninstall removes ours only.
	res2, err := Uninstall(dir)
	if err != nil || res2.Removed != 2 {
		t.Fatalf("uninstall %+v %v", res2, err)
	}
	f, _ = readHooksFile(hooksPath)
	if len(tollgateKeys(hooksPath, f)) != 0 || !strings.Contains(mustJSON(f), "save-notes") || !strings.Contains(mustJSON(f), "notify-send") {
		t.Fatalf("after uninstall: %s", mustJSON(f))
	}
	b, _ = os.ReadFile(configPath)
	if strings.Contains(string(b), "tollgate") || !strings.Contains(string(b), `trusted_hash = "sha256:mine"`) || !strings.Contains(string(b), "[profiles.fast]") {
		t.Fatalf("config after uninstall:\n%s", b)
	}
	if res2, err := Uninstall(dir); err != nil || res2.Removed != 0 {
		t.Fatalf("second uninstall %+v %v", res2, err)
	}
}

func TestInstallIntoAnEmptyCodexHome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "codex")
	exe := fakeExe(t)
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err != nil {
		t.Fatal(err)
	}
	if s := Status(probe(dir, exe)); !s.Verified {
		t.Fatalf("%+v", s)
	}
	if res, err := Uninstall(dir); err != nil || res.Removed != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "hooks.json"))
	c, _ := os.ReadFile(filepath.Join(dir, "config.toml"))
	if strings.TrimSpace(string(b)) != "{}" || strings.TrimSpace(string(c)) != "" {
		t.Fatalf("left behind: %q %q", b, c)
	}
}

func TestInstallRefusesFilesItCannotRead(t *testing.T) {
	exe := fakeExe(t)
	cases := []struct {
		name, hooks, config, want string
	}{
		{"hooks.json syntax", "{\n  \"hooks\": {\n    \"PreCompact\": [,]\n  }\n}\n", "", "hooks.json:3: does not parse"},
		{"hooks.json shape", `{"hooks": []}`, "", "hooks.json: hooks: want an object"},
		{"PreCompact shape", `{"hooks": {"PreCompact": {"hooks": []}}}`, "", "hooks.PreCompact: want a list"},
		{"config.toml syntax", "", "model = \"a\"\n\n[profiles\nx = 1\n", "config.toml:3: does not parse"},
		{"trust set inline", "", "[hooks]\nstate = { }\n", "would break the file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.hooks != "" {
				os.WriteFile(filepath.Join(dir, "hooks.json"), []byte(c.hooks), 0o600)
			}
			if c.config != "" {
				os.WriteFile(filepath.Join(dir, "config.toml"), []byte(c.config), 0o600)
			}
			_, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "hooks.json")); string(b) != c.hooks {
				t.Fatalf("hooks.json changed: %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "config.toml")); string(b) != c.config {
				t.Fatalf("config.toml changed: %q", b)
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := marshalHooks(map[string]any{"v": v})
	return string(b)
}

// A FIFO named hooks.json or config.toml is refused at once, naming the
// file, instead of blocking Status (and GET /v1/engines, the Integrations
// page and doctor with it) until a writer comes.
func TestStatusDoesNotBlockOnAFIFO(t *testing.T) {
	exe := fakeExe(t)
	for _, name := range []string{"hooks.json", "config.toml"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if name == "config.toml" {
				// Installed, so Status goes on to read the trust.
				if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, name))
			}
			fifo := filepath.Join(dir, name)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			done := make(chan string, 1)
			go func() { done <- Status(probe(dir, exe)).Detail }()
			var detail string
			select {
			case detail = <-done:
			case <-time.After(30 * time.Second):
				// Not a timing assert: a blocked open never returns. Open
				// the writer end so the reader goroutine can end.
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
				t.Fatalf("Status blocked on the FIFO %s", fifo)
			}
			if !strings.Contains(detail, fifo) || !strings.Contains(detail, "not a regular file") {
				t.Fatalf("detail %q does not name %s as not a regular file", detail, fifo)
			}
			if name == "config.toml" {
				env := probe(dir, exe).Getenv
				if w, th := autoCompact(19000, env); w != 19000 || th != 17100 {
					t.Fatalf("autoCompact over a FIFO config: %d %d", w, th)
				}
			} else if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err == nil || !strings.Contains(err.Error(), fifo) {
				t.Fatalf("install over a FIFO: %v", err)
			}
		})
	}
}

// Codex keys a hook's trust by its place, so removing tollgate's groups
// (--uninstall), or a second handler of tollgate's (--install), would
// leave the hooks after them untrusted: their trust tables follow them,
// hash kept, so Codex goes on running them.
func TestTrustFollowsTheUsersHooksThatMove(t *testing.T) {
	dir, exe, hooksPath, configPath := usersCodex(t)
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err != nil {
		t.Fatal(err)
	}
	// The user adds a hook after tollgate's under each event and trusts
	// it, as Codex's /hooks review does.
	f, _ := readHooksFile(hooksPath)
	events := f["hooks"].(map[string]any)
	later := func(cmd string) map[string]any {
		return map[string]any{"hooks": []any{map[string]any{"type": "command", "command": cmd}}}
	}
	events["PreCompact"] = append(events["PreCompact"].([]any), later("/usr/local/bin/later"))
	events["PostCompact"] = append(events["PostCompact"].([]any), later("/usr/local/bin/post-later"))
	b, _ := marshalHooks(f)
	os.WriteFile(hooksPath, b, 0o644)
	preHash := trustHash("pre_compact", nil, "/usr/local/bin/later", 600)
	postHash := trustHash("post_compact", nil, "/usr/local/bin/post-later", 600)
	config, _ := os.ReadFile(configPath)
	config = append(config, []byte(fmt.Sprintf("\n[hooks.state.%q] # reviewed\ntrusted_hash = %q\n\n[hooks.state.%q]\ntrusted_hash = %q\n",
		hooksPath+":pre_compact:2:0", preHash, hooksPath+":post_compact:1:0", postHash))...)
	os.WriteFile(configPath, config, 0o640)

	if res, err := Uninstall(dir); err != nil || res.Removed != 2 {
		t.Fatalf("uninstall %+v %v", res, err)
	}
	b, _ = os.ReadFile(configPath)
	text := string(b)
	if _, err := parseConfig(configPath, text); err != nil {
		t.Fatal(err)
	}
	for key, hash := range map[string]string{
		hooksPath + ":pre_compact:1:0":  preHash,  // was 2:0, after tollgate's group 1
		hooksPath + ":post_compact:0:0": postHash, // was 1:0, after tollgate's group 0
		hooksPath + ":pre_compact:0:0":  "sha256:mine",
		hooksPath + ":pre_compact:2:0":  "",
		hooksPath + ":post_compact:1:0": "",
	} {
		if got := trustedHash(text, key); got != hash {
			t.Errorf("%s: trusted_hash %q, want %q", key, got, hash)
		}
	}
	if !strings.Contains(text, "] # reviewed") || strings.Contains(text, "tollgate") {
		t.Fatalf("config after uninstall:\n%s", text)
	}
	// And the hooks are where those keys say.
	f, _ = readHooksFile(hooksPath)
	abs, _ := filepath.Abs(hooksPath)
	if got := otherKeys(abs, f); strings.Join(got["PreCompact"], " ") != hooksPath+":pre_compact:0:0 "+hooksPath+":pre_compact:1:0" ||
		!strings.Contains(mustJSON(f["hooks"].(map[string]any)["PreCompact"].([]any)[1]), "/usr/local/bin/later") {
		t.Fatalf("hooks after uninstall: %s", mustJSON(f))
	}

	// --install with a second handler of tollgate's before the user's
	// hook: the duplicate goes, the user's hook moves up, and so does its
	// trust.
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err != nil {
		t.Fatal(err)
	}
	f, _ = readHooksFile(hooksPath)
	events = f["hooks"].(map[string]any)
	pre := events["PreCompact"].([]any) // save-notes, later, tollgate
	dup := pre[2]
	events["PreCompact"] = append(pre[:2:2], dup, dup, later("/usr/local/bin/last"))
	b, _ = marshalHooks(f)
	os.WriteFile(hooksPath, b, 0o644)
	lastHash := trustHash("pre_compact", nil, "/usr/local/bin/last", 600)
	config, _ = os.ReadFile(configPath)
	config = append(config, []byte(fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", hooksPath+":pre_compact:4:0", lastHash))...)
	os.WriteFile(configPath, config, 0o640)
	if _, err := Install(InstallOptions{CodexDir: dir, Exe: exe, Timeout: InstallTimeout}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(configPath)
	if got := trustedHash(string(b), hooksPath+":pre_compact:3:0"); got != lastHash {
		t.Fatalf("the hook after tollgate's duplicate lost its trust (%q):\n%s", got, b)
	}
	if got := trustedHash(string(b), hooksPath+":pre_compact:4:0"); got != "" {
		t.Fatalf("trust left at the old place:\n%s", b)
	}
	if s := Status(probe(dir, exe)); !s.Verified {
		t.Fatalf("after install: %+v", s)
	}
}

// usersCodex is a Codex home holding the user's own hooks.json and
// config.toml (userHooks, userConfig), with a tollgate binary to install.
func usersCodex(t *testing.T) (dir, exe, hooksPath, configPath string) {
	t.Helper()
	dir = t.TempDir()
	exe = fakeExe(t)
	hooksPath, configPath = filepath.Join(dir, "hooks.json"), filepath.Join(dir, "config.toml")
	os.WriteFile(hooksPath, []byte(userHooks), 0o644)
	os.WriteFile(configPath, []byte(strings.ReplaceAll(userConfig, "HOOKS", hooksPath)), 0o640)
	return dir, exe, hooksPath, configPath
}
