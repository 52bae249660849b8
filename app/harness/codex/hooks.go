package codex

// Installing the hook: Codex CLI reads user hooks from
// $CODEX_HOME/hooks.json (else ~/.codex/hooks.json) — codex-rs/hooks/src/
// engine/discovery.rs, load_hooks_json — and, since 0.129, runs a user hook
// only once it is trusted: config.toml's [hooks.state."<key>"] holds a
// trusted_hash equal to the hash Codex computes for the hook (discovery.rs,
// command_hook_hash / hook_trust_status; the key is
// "<hooks.json path>:<event>:<group>:<handler>", codex-rs/hooks/src/lib.rs
// hook_key). The `hooks` feature is stable and on by default in 0.171.0
// (`codex features list`), so no feature flag is written.
//
// --install adds tollgate's PreCompact and PostCompact groups at the end of
// their lists (or replaces its handlers where they are: Codex keys trust by
// position, so no other hook moves), keeps every other hook, and trusts
// exactly those two handlers (the user asked for them by running --install;
// Codex's /hooks review is what the trust replaces). --uninstall removes
// only tollgate's groups and the trust entries at their keys. Where that
// (or --install dropping a second handler of tollgate's) moves the hooks
// after them up, their trust tables are renamed to their new keys (the
// hash does not depend on the place), so Codex goes on running them. A
// hooks.json or config.toml that does not parse is refused, naming the
// file and line, and nothing is written.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"tollgate/app/harness/hookio"
	"tollgate/app/home"
	"tollgate/app/importer/jsonl"
	"tollgate/guard/api"
)

// Hook timeouts: Codex's default for command hooks (discovery.rs:
// timeout_sec.unwrap_or(600)) and what Install writes.
const (
	DefaultTimeout = 600 * time.Second
	InstallTimeout = 300 * time.Second
)

// maxConfigFile bounds what tollgate reads of hooks.json and config.toml
// (both are hand-edited files of a few kilobytes).
const maxConfigFile = 4 << 20

// Dir is Codex's folder: $CODEX_HOME, else ~/.codex.
func Dir(getenv func(string) string) (string, error) {
	return home.HarnessDir(getenv, "CODEX_HOME", ".codex")
}

// codexEvent is a Codex hook event tollgate installs under, with the label
// Codex uses in hook-state keys and trust hashes (codex-rs/hooks/src/lib.rs,
// hook_event_key_label).
type codexEvent struct{ name, label string }

var codexEvents = []codexEvent{
	{codexPreCompact, "pre_compact"},
	{codexPostCompact, "post_compact"},
}

// InstallOptions say which hook Install writes.
type InstallOptions struct {
	CodexDir string        // Codex's folder (hooks.json and config.toml)
	Home     string        // --home to pass on ("" = the default home)
	Profile  string        // pricing profile ("" = by provider and model)
	Timeout  time.Duration // the hook's timeout
	Exe      string        // this binary ("" = os.Executable)
}

// InstallResult says what Install did.
type InstallResult struct {
	Changed bool   // false: the same hooks were there, trusted, already
	Hooks   string // hooks.json
	Config  string // config.toml
	Seconds int    // the timeout written
}

// Install merges tollgate's PreCompact and PostCompact hooks into Codex's
// hooks.json (replacing earlier ones of tollgate's) and trusts them in
// config.toml. Either file failing to parse changes nothing.
func Install(o InstallOptions) (InstallResult, error) {
	res := InstallResult{Seconds: max(int(o.Timeout/time.Second), 1),
		Hooks: filepath.Join(o.CodexDir, "hooks.json"), Config: filepath.Join(o.CodexDir, "config.toml")}
	hooksFile, err := readHooksFile(res.Hooks)
	if err != nil {
		return res, fmt.Errorf("%w — fix or move it, then run --install again", err)
	}
	configText, err := readConfigFile(res.Config)
	if err != nil {
		return res, fmt.Errorf("%w — fix it, then run --install again", err)
	}
	exe := o.Exe
	if exe == "" {
		exe, err = home.Executable()
		if err != nil {
			return res, fmt.Errorf("finding this binary: %w", err)
		}
	}
	command := hookCommand(exe, o.Home, o.Profile, res.Seconds)
	if err := checkHashable(command); err != nil {
		return res, err
	}
	abs, err := filepath.Abs(res.Hooks)
	if err != nil {
		return res, err
	}
	before, othersBefore := tollgateKeys(abs, hooksFile), otherKeys(abs, hooksFile)
	hooksFile = withTollgateHooks(hooksFile, command, res.Seconds)
	after := tollgateKeys(abs, hooksFile)
	// Our handler is replaced where it is or appended, so no other hook
	// moves, except after a second handler of tollgate's, which is removed.
	moved := movedKeys(othersBefore, otherKeys(abs, hooksFile))

	newHooks, err := marshalHooks(hooksFile)
	if err != nil {
		return res, err
	}
	stale := map[string]bool{}
	for _, k := range before {
		stale[k.key] = true
	}
	newConfig, err := withTrust(configText, stale, after, moved, res.Config)
	if err != nil {
		return res, err
	}
	oldHooks, _ := readBounded(res.Hooks)
	if bytes.Equal(oldHooks, newHooks) && newConfig == configText {
		return res, nil
	}
	res.Changed = true
	if err := os.MkdirAll(o.CodexDir, 0o700); err != nil {
		return res, err
	}
	if err := writeKeepingMode(res.Hooks, newHooks); err != nil {
		return res, fmt.Errorf("writing %s: %w", res.Hooks, err)
	}
	if newConfig != configText {
		if err := writeKeepingMode(res.Config, []byte(newConfig)); err != nil {
			return res, fmt.Errorf("writing %s: %w", res.Config, err)
		}
	}
	return res, nil
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	Removed int // hooks removed
	Hooks   string
}

// Uninstall removes tollgate's hooks from hooks.json and their trust
// entries from config.toml, leaving everything else as it was.
func Uninstall(codexDir string) (UninstallResult, error) {
	res := UninstallResult{Hooks: filepath.Join(codexDir, "hooks.json")}
	configPath := filepath.Join(codexDir, "config.toml")
	hooksFile, err := readHooksFile(res.Hooks)
	if err != nil {
		return res, err
	}
	configText, err := readConfigFile(configPath)
	if err != nil {
		return res, err
	}
	abs, err := filepath.Abs(res.Hooks)
	if err != nil {
		return res, err
	}
	ours := tollgateKeys(abs, hooksFile)
	res.Removed = len(ours)
	if res.Removed == 0 {
		return res, nil
	}
	stale := map[string]bool{}
	for _, k := range ours {
		stale[k.key] = true
	}
	// Removing tollgate's groups shifts the hooks after them, and Codex
	// keys trust by position: their trust tables move with them.
	othersBefore := otherKeys(abs, hooksFile)
	hooksFile = withoutTollgateHooks(hooksFile)
	moved := movedKeys(othersBefore, otherKeys(abs, hooksFile))
	newConfig, err := withTrust(configText, stale, nil, moved, configPath)
	if err != nil {
		return res, err
	}
	b, err := marshalHooks(hooksFile)
	if err != nil {
		return res, err
	}
	if err := writeKeepingMode(res.Hooks, b); err != nil {
		return res, fmt.Errorf("writing %s: %w", res.Hooks, err)
	}
	if newConfig != configText {
		if err := writeKeepingMode(configPath, []byte(newConfig)); err != nil {
			return res, fmt.Errorf("writing %s: %w", configPath, err)
		}
	}
	return res, nil
}

// Status reports whether tollgate's PreCompact hook is in Codex's
// hooks.json, trusted in config.toml, and runs this tollgate (verified: it
// then arms the guard).
func Status(p home.Probe) api.Integration {
	in := api.Integration{Name: Name, Note: Behaviour}
	in.Installed, in.Verified, in.Detail = check(p)
	return in
}

// check is Status's reading of Codex's files: whether tollgate's
// PreCompact hook is installed, whether it is trusted and runs this
// tollgate, and the line that says so (or what is wrong).
func check(p home.Probe) (installed, verified bool, detail string) {
	dir, err := Dir(p.Getenv)
	if err != nil {
		return false, false, "no home folder: " + err.Error()
	}
	path := filepath.Join(dir, "hooks.json")
	hooksFile, err := readHooksFile(path)
	if err != nil {
		return false, false, err.Error()
	}
	abs, _ := filepath.Abs(path)
	var pre *hookKey
	for _, k := range tollgateKeys(abs, hooksFile) {
		if k.event == codexPreCompact {
			pre = &k
			break
		}
	}
	if pre == nil {
		return false, false, "not installed: run `tollgate hook codex --install`"
	}
	exe, err := home.VerifyCommand(pre.command, p.Self)
	if err != nil {
		return true, false, fmt.Sprintf("%s: PreCompact hook %q: %v", path, pre.command, err)
	}
	configPath := filepath.Join(dir, "config.toml")
	configText, err := readConfigFile(configPath)
	if err != nil {
		return true, false, err.Error()
	}
	if got := trustedHash(configText, pre.key); got != pre.hash {
		return true, false, fmt.Sprintf("PreCompact hook installed in %s but not trusted in %s, so Codex does not run it: run `tollgate hook codex --install` again, or review it in Codex's /hooks", path, configPath)
	}
	return true, true, fmt.Sprintf("PreCompact hook installed and trusted (%s, timeout %ds) → %s", path, pre.timeout, exe)
}

// Behaviour is the integration's Note: what a declined Codex compaction
// does.
const Behaviour = "Declining a Codex compaction ends the current Codex turn (its PreCompact hook can stop the turn, not skip only the compaction); " +
	"Codex proposes the compaction again on the next turn"

// ---- hooks.json ----

// readHooksFile reads hooks.json as a generic object (every key tollgate
// does not know survives a rewrite). A missing or empty file is an empty
// object; one that does not parse is an error naming the file and line.
func readHooksFile(path string) (map[string]any, error) {
	b, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeHooksFile(path, b)
}

// decodeHooksFile decodes hooks.json's bytes; errors name the file, line
// and key.
func decodeHooksFile(path string, b []byte) (map[string]any, error) {
	out := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("%s:%d: does not parse: %v", path, lineOf(b, se.Offset), se)
		case errors.As(err, &te):
			return nil, fmt.Errorf("%s:%d: want a JSON object, got a JSON %s", path, lineOf(b, te.Offset), te.Value)
		}
		return nil, fmt.Errorf("%s: does not parse: %w", path, err)
	}
	if h, ok := out["hooks"]; ok {
		events, isObject := h.(map[string]any)
		if !isObject {
			return nil, fmt.Errorf("%s: hooks: want an object of events", path)
		}
		for _, e := range codexEvents {
			if g, ok := events[e.name]; ok {
				if _, isList := g.([]any); !isList {
					return nil, fmt.Errorf("%s: hooks.%s: want a list of matcher groups", path, e.name)
				}
			}
		}
	}
	return out, nil
}

func lineOf(b []byte, offset int64) int {
	offset = min(max(offset, 0), int64(len(b)))
	return bytes.Count(b[:offset], []byte("\n")) + 1
}

func marshalHooks(f map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// isTollgateCommand says whether a hook command is tollgate's own.
func isTollgateCommand(cmd string) bool {
	return strings.Contains(cmd, " hook codex")
}

// hookKey is one of tollgate's handlers in hooks.json, where Codex keys it.
type hookKey struct {
	event, key, command, hash string
	timeout                   int
}

// tollgateKeys lists tollgate's handlers in hooks.json with their
// hook-state keys (absPath is hooks.json's absolute path, as Codex keys it)
// and the hashes Codex computes for them.
func tollgateKeys(absPath string, f map[string]any) []hookKey {
	var out []hookKey
	eachHandler(f, func(e codexEvent, gi, hi int, group, hook map[string]any, cmd string) {
		if hook == nil || !isTollgateCommand(cmd) {
			return
		}
		k := hookKey{event: e.name, command: cmd, key: stateKey(absPath, e.label, gi, hi)}
		k.timeout = int(DefaultTimeout / time.Second)
		switch t := hook["timeout"].(type) {
		case float64: // as read from the file
			if t >= 1 && t < 1<<31 {
				k.timeout = int(t)
			}
		case int: // as Install writes it
			k.timeout = max(t, 1)
		}
		var m *string
		if matcher, ok := group["matcher"].(string); ok {
			m = &matcher
		}
		k.hash = trustHash(e.label, m, cmd, k.timeout)
		out = append(out, k)
	})
	return out
}

// eachHandler calls fn for every handler of the events tollgate edits in
// hooks.json, in file order: its event, its group's and its own place in
// their lists, the group, the handler (nil when it is not an object) and
// its command.
func eachHandler(f map[string]any, fn func(e codexEvent, gi, hi int, group, hook map[string]any, cmd string)) {
	events, _ := f["hooks"].(map[string]any)
	for _, e := range codexEvents {
		groups, _ := events[e.name].([]any)
		for gi, g := range groups {
			group, _ := g.(map[string]any)
			list, _ := group["hooks"].([]any)
			for hi, h := range list {
				hook, _ := h.(map[string]any)
				cmd, _ := hook["command"].(string)
				fn(e, gi, hi, group, hook, cmd)
			}
		}
	}
}

// stateKey is the key Codex keeps a hook's state (trust) under
// (codex-rs/hooks/src/lib.rs, hook_key): hooks.json's absolute path, the
// event's label, and the group's and handler's places in their lists.
func stateKey(absPath, label string, group, handler int) string {
	return absPath + ":" + label + ":" + strconv.Itoa(group) + ":" + strconv.Itoa(handler)
}

// otherKeys lists the state keys of every handler that is not tollgate's,
// per event tollgate edits, in file order. Adding or removing tollgate's
// handlers keeps the others and their order, so the n-th of an event
// before is the n-th after (movedKeys).
func otherKeys(absPath string, f map[string]any) map[string][]string {
	out := map[string][]string{}
	eachHandler(f, func(e codexEvent, gi, hi int, _, hook map[string]any, cmd string) {
		if hook == nil || !isTollgateCommand(cmd) {
			out[e.name] = append(out[e.name], stateKey(absPath, e.label, gi, hi))
		}
	})
	return out
}

// movedKeys maps the old state key of each other hook that moved to its
// new one. The trust hash does not depend on the place (trustHash), so a
// hook the user trusted stays trusted once its table follows it.
func movedKeys(before, after map[string][]string) map[string]string {
	moved := map[string]string{}
	for event, old := range before {
		now := after[event]
		for i := range min(len(old), len(now)) {
			if old[i] != now[i] {
				moved[old[i]] = now[i]
			}
		}
	}
	return moved
}

// withoutTollgateHooks removes tollgate's handlers (and the groups and keys
// they leave empty), keeping everything else.
func withoutTollgateHooks(f map[string]any) map[string]any {
	events, _ := f["hooks"].(map[string]any)
	if events == nil {
		return f
	}
	for _, e := range codexEvents {
		groups, ok := events[e.name].([]any)
		if !ok {
			continue
		}
		kept := hookio.EditHandlers(groups, func(h any) (any, bool) {
			hook, _ := h.(map[string]any)
			cmd, _ := hook["command"].(string)
			return h, hook == nil || !isTollgateCommand(cmd)
		})
		if len(kept) == 0 {
			delete(events, e.name)
		} else {
			events[e.name] = kept
		}
	}
	if len(events) == 0 {
		delete(f, "hooks")
	}
	return f
}

// withTollgateHooks puts tollgate's handler under each event: in place of
// the first one of tollgate's already there (so no other hook moves: Codex
// keys trust by position), else in a group of its own at the end (no
// matcher: both automatic and manual compactions reach the gate, which
// decides by its rules). Any further handler of tollgate's is removed.
func withTollgateHooks(f map[string]any, command string, seconds int) map[string]any {
	events, _ := f["hooks"].(map[string]any)
	if events == nil {
		events = map[string]any{}
		f["hooks"] = events
	}
	for _, e := range codexEvents {
		hook := map[string]any{"type": "command", "command": command, "timeout": seconds}
		groups, _ := events[e.name].([]any)
		placed := false
		kept := hookio.EditHandlers(groups, func(h any) (any, bool) {
			old, _ := h.(map[string]any)
			cmd, _ := old["command"].(string)
			switch {
			case old == nil || !isTollgateCommand(cmd):
				return h, true
			case !placed:
				placed = true
				return hook, true
			}
			return nil, false
		})
		if !placed {
			kept = append(kept, map[string]any{"hooks": []any{hook}})
		}
		events[e.name] = kept
	}
	return f
}

// hookCommand is the command line --install writes.
func hookCommand(exe, dir, profile string, seconds int) string {
	return hookio.CommandLine(exe, Name, dir, profile, seconds)
}

// ---- the trust hash ----

// trustHash is the hash Codex 0.171 trusts a command hook by
// (codex-rs/hooks/src/engine/discovery.rs, command_hook_hash, and
// codex-rs/config/src/fingerprint.rs, version_for_toml): the normalized
// identity {event_name, matcher?, hooks: [{type, command, timeout, async}]}
// — absent options are dropped, as TOML cannot hold a null — written as
// JSON with its keys sorted and no spaces, then SHA-256. Verified against
// the real Codex 0.171.0: a hook trusted by this hash runs
// (test/harness/codex_test.go).
func trustHash(label string, matcher *string, command string, timeout int) string {
	identity := map[string]any{
		"event_name": label,
		"hooks":      []any{map[string]any{"type": "command", "command": command, "timeout": timeout, "async": false}},
	}
	if matcher != nil {
		identity["matcher"] = *matcher
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // serde_json does not escape <, > or &
	enc.Encode(identity)     // maps are written with sorted keys
	sum := sha256.Sum256(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// checkHashable refuses a command whose JSON spelling could differ between
// Go and serde_json (control characters, U+2028/U+2029), so a trusted hash
// never silently fails to match.
func checkHashable(command string) error {
	for _, r := range command {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return fmt.Errorf("the hook command %q holds a control character: move tollgate or its home to a plain path", command)
		}
	}
	return nil
}

// ---- config.toml ----

// readConfigFile reads config.toml as text and checks that it parses; an
// error names the file and line. A missing file is empty.
func readConfigFile(path string) (string, error) {
	b, err := readBounded(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := parseConfig(path, string(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

// parseConfig parses config.toml; errors name the file and line.
func parseConfig(path, text string) (map[string]any, error) {
	var v map[string]any
	if err := toml.Unmarshal([]byte(text), &v); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("%s:%d: does not parse: %s", path, row, de.Error())
		}
		return nil, fmt.Errorf("%s: does not parse: %w", path, err)
	}
	return v, nil
}

// trustedHash is config.toml's hooks.state.<key>.trusted_hash ("" when
// absent or unreadable).
func trustedHash(text, key string) string {
	v, err := parseConfig("", text)
	if err != nil {
		return ""
	}
	hooks, _ := v["hooks"].(map[string]any)
	state, _ := hooks["state"].(map[string]any)
	entry, _ := state[key].(map[string]any)
	h, _ := entry["trusted_hash"].(string)
	return h
}

// withTrust returns config.toml's text without the [hooks.state."<key>"]
// tables of the stale keys, with the tables of the moved keys renamed to
// their new keys (body and place kept), and with one table per wanted key
// holding its trusted hash; every other line stays as the user wrote it.
// The result is parsed again and must hold exactly the wanted hashes and
// the moved tables' hashes at their new keys, else nothing changes and the
// error says why.
func withTrust(text string, stale map[string]bool, want []hookKey, moved map[string]string, path string) (string, error) {
	wanted := map[string]string{}
	for _, k := range want {
		stale[k.key] = true
		wanted[k.key] = k.hash
	}
	// Only the moved keys that have a table move; a table already at a
	// key one of them moves to belonged to the hook that was there before
	// (tollgate's, or none), so it gives way.
	renames, landing := map[string]string{}, map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if key, ok := stateTableKey(strings.TrimSpace(line)); ok && moved[key] != "" {
			renames[key] = moved[key]
			landing[moved[key]] = true
		}
	}
	var kept []string
	skipping := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			skipping = false
			key, ok := stateTableKey(t)
			switch {
			case ok && renames[key] != "":
				q, _ := json.Marshal(renames[key]) // a TOML basic string: JSON's escapes are TOML's
				kept = append(kept, line[:len(line)-len(strings.TrimLeft(line, " \t"))]+"[hooks.state."+string(q)+"]"+headerComment(t))
				continue
			case ok && (stale[key] || landing[key]):
				skipping = true
				if n := len(kept); n > 0 && strings.HasPrefix(kept[n-1], trustComment) {
					kept = kept[:n-1]
				}
				continue
			}
		}
		if !skipping {
			kept = append(kept, line)
		}
	}
	out := strings.TrimRight(strings.Join(kept, "\n"), "\n")
	for _, k := range want {
		if out != "" {
			out += "\n\n"
		}
		q, _ := json.Marshal(k.key)
		out += trustComment + " its " + k.event + " hook (`tollgate hook codex --uninstall` removes it)\n" +
			"[hooks.state." + string(q) + "]\ntrusted_hash = \"" + k.hash + "\""
	}
	if out != "" {
		out += "\n"
	}
	if strings.TrimRight(out, "\n") == strings.TrimRight(text, "\n") {
		return text, nil
	}
	if _, err := parseConfig(path, out); err != nil {
		return "", fmt.Errorf("%s: adding tollgate's hook trust would break the file (%v): does it set hooks.state another way?", path, err)
	}
	for key := range stale {
		if landing[key] {
			continue // a moved table's now: checked below
		}
		if got := trustedHash(out, key); got != wanted[key] {
			return "", fmt.Errorf("%s: hooks.state.%q is set another way that tollgate does not edit: remove it, then run again", path, key)
		}
	}
	for old, key := range moved {
		if renames[old] == "" && trustedHash(text, old) == "" {
			continue // no trust to carry
		}
		if got := trustedHash(out, key); got != trustedHash(text, old) {
			return "", fmt.Errorf("%s: hooks.state.%q is set another way that tollgate does not edit, so its trust cannot follow the hook to %q: move it yourself, then run again", path, old, key)
		}
	}
	return out, nil
}

// headerComment is what follows a table header's closing bracket (a
// comment, or nothing).
func headerComment(header string) string {
	if i := strings.LastIndex(header, "]"); i >= 0 {
		return header[i+1:]
	}
	return ""
}

// trustComment starts the comment above each trust table tollgate writes.
const trustComment = "# tollgate: trust"

// stateTableKey reads a `[hooks.state."<key>"]` header's key.
func stateTableKey(header string) (string, bool) {
	rest, ok := strings.CutPrefix(header, "[hooks.state.")
	if !ok {
		return "", false
	}
	rest, ok = strings.CutSuffix(strings.TrimSpace(stripComment(rest)), "]")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(rest, `"`):
		var s string
		if json.Unmarshal([]byte(rest), &s) == nil {
			return s, true
		}
	case strings.HasPrefix(rest, `'`) && strings.HasSuffix(rest, `'`) && len(rest) >= 2:
		return rest[1 : len(rest)-1], true
	}
	return "", false
}

// stripComment drops a trailing # comment after a table header's bracket.
func stripComment(s string) string {
	if i := strings.LastIndex(s, "]"); i >= 0 {
		return s[:i+1]
	}
	return s
}

// ---- files ----

// readBounded reads a hand-edited config file of Codex's, at most
// maxConfigFile bytes (jsonl.ReadRegular): a FIFO named hooks.json or
// config.toml would otherwise block the open until a writer came, and
// with it Status (GET /v1/engines, the Integrations page, doctor) and the
// hook. Errors name the file.
func readBounded(path string) ([]byte, error) {
	return jsonl.ReadRegular(path, maxConfigFile, false)
}

// writeKeepingMode writes a file atomically with its previous mode (0600
// for a new one).
func writeKeepingMode(path string, b []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return home.WriteFileAtomic(path, b, mode)
}
