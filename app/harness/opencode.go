package harness

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// OpenCode is the OpenCode plugin (integrations/opencode). It guards
// through an engine lease while OpenCode runs, like dsh's: it turns
// OpenCode's automatic compaction off while tollgate answers and asks once
// the context crosses OpenCode's threshold — when the session goes idle, or
// before its next model request (ARCHITECTURE.md, "OpenCode").
const OpenCode = "opencode"

// openCodeConfigMax bounds the read of OpenCode's global config file.
const openCodeConfigMax = 1 << 20

func openCodeStatus(p home.Probe) api.Integration {
	in := api.Integration{Name: OpenCode}
	where := openCodePluginConfigured(p)
	m, seenErr := home.ReadMarker(p.Home, OpenCode)
	switch {
	case where == "" && seenErr != nil:
		in.Detail = "not installed: add tollgate's plugin (integrations/opencode/index.js) to OpenCode's \"plugin\" list; it registers an engine while OpenCode runs"
		return in
	case seenErr != nil:
		in.Installed = true
		in.Detail = "plugin configured in " + where + "; not seen yet: it arms the guard once OpenCode starts while tollgate runs"
		return in
	}
	in.Installed = true
	in.Detail = "plugin seen " + m.At.Local().Format("2006-01-02 15:04")
	if m.Version != "" {
		in.Detail += " (OpenCode " + m.Version + ")"
	}
	in.Detail += "; it arms the guard while OpenCode runs (engine lease); declining leaves the history whole and asks again after the next turn above OpenCode's threshold"
	return in
}

// openCodePluginConfigured names the global OpenCode config that lists
// tollgate's plugin ("" when none does): $OPENCODE_CONFIG, then
// opencode.json, opencode.jsonc and config.json in $XDG_CONFIG_HOME/opencode
// (~/.config/opencode), or a plugin file named *tollgate* in its plugin/ or
// plugins/ folder. A project's own .opencode folder is not looked at: the
// marker the plugin writes when it runs shows those.
func openCodePluginConfigured(p home.Probe) string {
	dir := p.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if h := p.Getenv("HOME"); h != "" {
			dir = filepath.Join(h, ".config")
		}
	}
	var files []string
	if f := p.Getenv("OPENCODE_CONFIG"); f != "" {
		files = append(files, f)
	}
	if dir != "" {
		dir = filepath.Join(dir, "opencode")
		files = append(files, filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc"), filepath.Join(dir, "config.json"))
	}
	for _, f := range files {
		if listsTollgatePlugin(f) {
			return f
		}
	}
	if dir == "" {
		return ""
	}
	for _, sub := range []string{"plugin", "plugins"} {
		entries, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, e := range entries {
			if strings.Contains(strings.ToLower(e.Name()), "tollgate") {
				return filepath.Join(dir, sub, e.Name())
			}
		}
	}
	return ""
}

// listsTollgatePlugin reports whether an OpenCode config (JSON with
// comments) has a "plugin" entry naming tollgate's plugin: a spec string,
// or [spec, options].
func listsTollgatePlugin(path string) bool {
	// Opened without blocking and read only when regular: a FIFO named
	// like a config never hangs the Integrations page.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(f, openCodeConfigMax+1))
	if err != nil || len(b) > openCodeConfigMax {
		return false
	}
	var cfg struct {
		Plugin []json.RawMessage `json:"plugin"`
	}
	if json.Unmarshal(StripJSONC(b), &cfg) != nil {
		return false
	}
	for _, raw := range cfg.Plugin {
		var spec string
		if json.Unmarshal(raw, &spec) != nil {
			var pair []json.RawMessage
			if json.Unmarshal(raw, &pair) != nil || len(pair) == 0 || json.Unmarshal(pair[0], &spec) != nil {
				continue
			}
		}
		if s := strings.ToLower(spec); strings.Contains(s, "tollgate") || strings.Contains(s, "integrations/opencode") {
			return true
		}
	}
	return false
}

// StripJSONC turns JSON with comments and trailing commas (OpenCode's
// opencode.jsonc) into JSON: comments outside strings become spaces, and a
// comma before a closing bracket is dropped.
func StripJSONC(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			out = append(out, c)
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			i += 2
			for i+1 < len(b) && (b[i] != '*' || b[i+1] != '/') {
				i++
			}
			i++
			out = append(out, ' ')
		case c == ']' || c == '}':
			trimmed := bytes.TrimRight(out, " \t\r\n")
			if len(trimmed) > 0 && trimmed[len(trimmed)-1] == ',' {
				out = append(trimmed[:len(trimmed)-1], c)
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}
