package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"tollgate/app/importer"
)

// Watch is the watch: key: whether the window and `tollgate serve` follow
// the harnesses' log folders (on unless turned off), and the folders added
// to the harnesses' own (ARCHITECTURE.md, "Following the logs").
type Watch struct {
	Enabled bool
	Folders []WatchFolder
}

// WatchFolder is one folder added under watch.folders.
type WatchFolder struct {
	Path    string // absolute, ~ expanded
	Harness string // "" detects per file
}

// maxWatchFolders bounds watch.folders: each is walked and watched.
const maxWatchFolders = 64

// parseWatch reads the watch: key. It accepts a boolean (watch: false),
// the same as a string (TOLLGATE_WATCH=false), or a map with enabled and
// folders; anything else is an error naming the key.
func parseWatch(file string, raw any) (Watch, error) {
	w := Watch{Enabled: true}
	bad := func(key string, value any, why string) error {
		return &ConfigError{File: file, Key: key, Value: value, Why: why}
	}
	switch v := raw.(type) {
	case nil:
		return w, nil
	case bool:
		w.Enabled = v
		return w, nil
	case string:
		b, err := parseBool(v)
		if err != nil {
			return w, bad("watch", v, "want true, false or a map with enabled and folders")
		}
		w.Enabled = b
		return w, nil
	case map[string]any:
		for key, val := range v {
			switch key {
			case "enabled":
				b, ok := val.(bool)
				if s, isString := val.(string); isString {
					var err error
					b, err = parseBool(s)
					ok = err == nil
				}
				if !ok {
					return w, bad("watch.enabled", val, "want true or false")
				}
				w.Enabled = b
			case "folders":
				folders, err := parseWatchFolders(file, val)
				if err != nil {
					return w, err
				}
				w.Folders = folders
			default:
				return w, bad("watch."+key, val, "unknown key: want enabled or folders")
			}
		}
		return w, nil
	}
	return w, bad("watch", raw, "want true, false or a map with enabled and folders")
}

func parseWatchFolders(file string, raw any) ([]WatchFolder, error) {
	if raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, &ConfigError{File: file, Key: "watch.folders", Value: raw, Why: "want a list of {path, harness}"}
	}
	if len(list) > maxWatchFolders {
		return nil, &ConfigError{File: file, Key: "watch.folders", Why: fmt.Sprintf("%d folders: at most %d", len(list), maxWatchFolders)}
	}
	out := make([]WatchFolder, 0, len(list))
	for i, item := range list {
		key := "watch.folders[" + strconv.Itoa(i) + "]"
		m, ok := item.(map[string]any)
		if !ok {
			// A bare string is the common shorthand: a folder, harness detected.
			s, isString := item.(string)
			if !isString {
				return nil, &ConfigError{File: file, Key: key, Value: item, Why: "want {path: /a/folder, harness: claude-code}"}
			}
			m = map[string]any{"path": s}
		}
		var f WatchFolder
		for k, v := range m {
			s, isString := v.(string)
			switch k {
			case "path":
				if !isString || strings.TrimSpace(s) == "" {
					return nil, &ConfigError{File: file, Key: key + ".path", Value: v, Why: "want a folder's path"}
				}
				p, err := expandHome(strings.TrimSpace(s))
				if err != nil {
					return nil, &ConfigError{File: file, Key: key + ".path", Value: s, Why: err.Error()}
				}
				if !filepath.IsAbs(p) {
					return nil, &ConfigError{File: file, Key: key + ".path", Value: s, Why: "want an absolute path (or one starting with ~/)"}
				}
				f.Path = filepath.Clean(p)
				if why := tooWide(f.Path); why != "" {
					return nil, &ConfigError{File: file, Key: key + ".path", Value: s, Why: why}
				}
			case "harness":
				h := strings.TrimSpace(s)
				if !isString || (h != "" && !slices.Contains(importer.Harnesses(), h)) {
					return nil, &ConfigError{File: file, Key: key + ".harness", Value: v, Why: "want one of " + strings.Join(importer.Harnesses(), ", ") + " (or leave it out to detect per file)"}
				}
				f.Harness = h
			default:
				return nil, &ConfigError{File: file, Key: key + "." + k, Value: v, Why: "unknown key: want path or harness"}
			}
		}
		if f.Path == "" {
			return nil, &ConfigError{File: file, Key: key + ".path", Why: "missing: which folder to follow"}
		}
		out = append(out, f)
	}
	return out, nil
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

// tooWide says why a folder cannot be followed whole: every folder below
// a followed one gets an inotify watch, and the root, the home folder or a
// folder above it would use up the user's watches (max_user_watches) and
// break other programs' file watching. "" when it can be.
func tooWide(p string) string {
	if p == string(filepath.Separator) {
		return "the root folder is too wide to follow: name the folder the logs are in"
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		home = filepath.Clean(home)
		if p == home || strings.HasPrefix(home, p+string(filepath.Separator)) {
			return "the home folder (or one above it) is too wide to follow: name the folder the logs are in"
		}
	}
	return ""
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot expand ~: %w", err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}
