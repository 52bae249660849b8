package claudecode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tollgate/app/harness/hookio"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// ConfigDir is Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude.
func ConfigDir(getenv func(string) string) (string, error) {
	return home.HarnessDir(getenv, "CLAUDE_CONFIG_DIR", ".claude")
}

// SettingsPath is Claude Code's user settings.json.
func SettingsPath(getenv func(string) string) (string, error) {
	dir, err := ConfigDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "settings.json"), nil
}

// Hook timeouts: Claude Code's own default for command hooks, and what
// Install writes.
const (
	DefaultTimeout = 600 * time.Second
	InstallTimeout = 300 * time.Second
)

// InstallOptions say which hook Install writes.
type InstallOptions struct {
	Settings string        // settings.json to edit
	Home     string        // --home to pass on ("" = the default home)
	Profile  string        // pricing profile ("" = by provider and model)
	Timeout  time.Duration // the hook's timeout
	// HTTP installs the HTTP hook (POST HookRoute on the running tollgate,
	// found in Home's api.json) instead of the command.
	HTTP bool
}

// InstallResult says what Install did.
type InstallResult struct {
	Changed bool   // false: the same hook was there already
	Backup  string // the previous settings ("" when there were none)
	Seconds int    // the timeout written
}

// Install merges tollgate's PreCompact and PostCompact hooks into Claude
// Code's settings (replacing earlier ones of tollgate's), keeping every other
// key and a backup of the old file.
func Install(o InstallOptions) (InstallResult, error) {
	res := InstallResult{Seconds: int(o.Timeout / time.Second)}
	settings, err := readClaudeSettings(o.Settings)
	if errors.Is(err, os.ErrNotExist) {
		settings, err = map[string]any{}, nil
	}
	if err != nil {
		return res, fmt.Errorf("%w — fix or move it, then run --install again", err)
	}
	var hook map[string]any
	if o.HTTP {
		dir, err := home.ResolveHome(o.Home)
		if err != nil {
			return res, err
		}
		info, err := home.LiveInstance(dir)
		if err != nil {
			return res, fmt.Errorf("%w (the HTTP hook needs the running tollgate's address)", err)
		}
		u := info.URL + "/v1/hooks/claude-code?timeout=" + strconv.Itoa(res.Seconds)
		if o.Profile != "" {
			u += "&profile=" + url.QueryEscape(o.Profile)
		}
		hook = map[string]any{"type": "http", "url": u, "timeout": res.Seconds,
			"headers": map[string]any{"Authorization": "Bearer $TOLLGATE_TOKEN"}, "allowedEnvVars": []any{"TOLLGATE_TOKEN"}}
	} else {
		exe, err := home.Executable()
		if err != nil {
			return res, fmt.Errorf("finding this binary: %w", err)
		}
		hook = map[string]any{"type": "command", "command": claudeHookCommand(exe, o.Home, o.Profile, o.Timeout), "timeout": res.Seconds}
	}
	settings, res.Changed = installClaudeHook(settings, hook)
	if !res.Changed {
		return res, nil
	}
	res.Backup, err = writeSettingsFile(o.Settings, settings, false)
	if err != nil {
		return res, fmt.Errorf("writing %s: %w", o.Settings, err)
	}
	return res, nil
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	Missing bool // the settings file does not exist
	Removed int  // hooks removed
	Backup  string
}

// Uninstall removes tollgate's hooks from Claude Code's settings.
func Uninstall(path string) (UninstallResult, error) {
	var res UninstallResult
	settings, err := readClaudeSettings(path)
	if errors.Is(err, os.ErrNotExist) {
		res.Missing = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	settings, res.Removed = withoutTollgateClaudeHooks(settings)
	if res.Removed == 0 {
		return res, nil
	}
	res.Backup, err = writeSettingsFile(path, settings, false)
	if err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	return res, nil
}

// Status reports whether tollgate's PreCompact hook is in Claude Code's
// settings and runs this tollgate (verified: it then arms the guard).
func Status(p home.Probe) api.Integration {
	in := api.Integration{Name: Name}
	dir, err := ConfigDir(p.Getenv)
	if err != nil {
		in.Detail = "no home folder: " + err.Error()
		return in
	}
	path := filepath.Join(dir, "settings.json")
	settings, err := readClaudeSettings(path)
	if errors.Is(err, fs.ErrNotExist) {
		in.Detail = "not installed: run `tollgate hook claude-code --install`"
		return in
	}
	if err != nil {
		in.Detail = err.Error()
		return in
	}
	hooks := findTollgateClaudeHooks(settings)
	if len(hooks) == 0 {
		in.Detail = "not installed in " + path + ": run `tollgate hook claude-code --install`"
		return in
	}
	in.Installed = true
	h := hooks[0]
	if h.Type == "http" {
		if u, err := url.Parse(h.URL); err != nil || u.Host == "" {
			in.Detail = fmt.Sprintf("%s: the PreCompact HTTP hook's url %q does not parse", path, h.URL)
			return in
		}
		in.Verified = true
		in.Detail = fmt.Sprintf("PreCompact HTTP hook → %s (%s)", h.URL, path)
		return in
	}
	exe, err := home.VerifyCommand(h.Command, p.Self)
	if err != nil {
		in.Detail = fmt.Sprintf("%s: PreCompact hook %q: %v", path, h.Command, err)
		return in
	}
	in.Verified = true
	in.Detail = fmt.Sprintf("PreCompact hook installed (%s, timeout %ds) → %s", path, h.Timeout, exe)
	return in
}

// claudeHookEntry is one hook of a settings.json matcher group.
type claudeHookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command,omitempty"`
	URL     string `json:"url,omitempty"`
	Timeout int    `json:"timeout,omitempty"`
}

// readClaudeSettings reads a settings.json as a generic object, so every
// key tollgate does not know survives a rewrite.
func readClaudeSettings(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	settings := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return settings, nil
	}
	if err := json.Unmarshal(b, &settings); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", path, err)
	}
	return settings, nil
}

// isTollgateClaudeHook says whether a hook object is tollgate's own.
func isTollgateClaudeHook(h map[string]any) bool {
	cmd, _ := h["command"].(string)
	u, _ := h["url"].(string)
	return strings.Contains(cmd, " hook claude-code") || strings.Contains(u, "/v1/hooks/claude-code")
}

// claudeHookEvents are the settings keys tollgate installs under.
var claudeHookEvents = []string{claudePreCompact, claudePostCompact}

// preCompactGroups returns settings.hooks.PreCompact (nil when absent or not a list).
func preCompactGroups(settings map[string]any) []any {
	return hookGroups(settings, claudePreCompact)
}

func hookGroups(settings map[string]any, event string) []any {
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	return groups
}

// findTollgateClaudeHooks lists tollgate's PreCompact hooks in settings
// (the one that guards; the PostCompact one only reports).
func findTollgateClaudeHooks(settings map[string]any) []claudeHookEntry {
	var out []claudeHookEntry
	for _, g := range preCompactGroups(settings) {
		group, _ := g.(map[string]any)
		list, _ := group["hooks"].([]any)
		for _, h := range list {
			hook, _ := h.(map[string]any)
			if hook == nil || !isTollgateClaudeHook(hook) {
				continue
			}
			e := claudeHookEntry{}
			e.Type, _ = hook["type"].(string)
			e.Command, _ = hook["command"].(string)
			e.URL, _ = hook["url"].(string)
			if t, ok := hook["timeout"].(float64); ok {
				e.Timeout = int(t)
			}
			out = append(out, e)
		}
	}
	return out
}

// withoutTollgateClaudeHooks removes tollgate's PreCompact and PostCompact
// hooks (and the groups and keys they leave empty), keeping everything else.
func withoutTollgateClaudeHooks(settings map[string]any) (map[string]any, int) {
	hooks, _ := settings["hooks"].(map[string]any)
	removed := 0
	for _, event := range claudeHookEvents {
		groups, ok := hooks[event].([]any)
		if !ok {
			continue
		}
		kept := hookio.EditHandlers(groups, func(h any) (any, bool) {
			if hook, _ := h.(map[string]any); hook != nil && isTollgateClaudeHook(hook) {
				removed++
				return nil, false
			}
			return h, true
		})
		if len(kept) == 0 {
			delete(hooks, event)
		} else {
			hooks[event] = kept
		}
	}
	if hooks != nil && len(hooks) == 0 {
		delete(settings, "hooks")
	}
	return settings, removed
}

// claudeHookCommand is the command line --install writes.
func claudeHookCommand(exe, dir, profile string, timeout time.Duration) string {
	return hookio.CommandLine(exe, Name, dir, profile, int(timeout/time.Second))
}

// installClaudeHook returns settings with tollgate's hook under PreCompact
// and PostCompact (replacing earlier ones of tollgate's), and whether
// anything changed.
func installClaudeHook(settings map[string]any, hook map[string]any) (map[string]any, bool) {
	before, _ := json.Marshal(settings)
	settings, _ = withoutTollgateClaudeHooks(settings)
	hooks, _ := settings["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		settings["hooks"] = hooks
	}
	for _, event := range claudeHookEvents {
		groups, _ := hooks[event].([]any)
		hooks[event] = append(groups, map[string]any{"matcher": "", "hooks": []any{hook}})
	}
	after, _ := json.Marshal(settings)
	return settings, !bytes.Equal(before, after)
}

// writeSettingsFile writes settings atomically with the old file's mode
// (0600 for a new one; private, as when they hold tollgate's token, takes
// away every bit but the owner's), and keeps the old file as a backup:
// PATH.tollgate-backup the first time, so the user's settings from before
// tollgate are never overwritten by a later install, and PATH.tollgate-
// backup.N, the next free N, for each change after that.
func writeSettingsFile(path string, settings map[string]any, private bool) (backup string, err error) {
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return "", err
	}
	b = append(b, '\n')
	mode := os.FileMode(0o600)
	if old, err := os.ReadFile(path); err == nil {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
		if private {
			mode &^= 0o077
		}
		if backup, err = writeBackup(path+".tollgate-backup", old, mode); err != nil {
			return "", err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	return backup, home.WriteFileAtomic(path, b, mode)
}

// maxBackups bounds the numbered backups writeBackup makes.
const maxBackups = 100

// writeBackup writes old to base, or to base.N (the first free N below
// maxBackups) when base exists, never over an existing file but the last.
func writeBackup(base string, old []byte, mode os.FileMode) (string, error) {
	name := base
	for n := 1; ; n++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) && n < maxBackups {
			name = base + "." + strconv.Itoa(n)
			continue
		}
		if errors.Is(err, os.ErrExist) {
			f, err = os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, mode)
		}
		if err != nil {
			return "", fmt.Errorf("writing the backup %s: %w", name, err)
		}
		_, werr := f.Write(old)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("writing the backup %s: %w", name, werr)
		}
		return name, os.Chmod(name, mode)
	}
}
