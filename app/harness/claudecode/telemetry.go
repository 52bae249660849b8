package claudecode

import (
	"errors"
	"fmt"
	"os"
	"sort"
)

// Claude Code's OpenTelemetry export, pointed at tollgate: its settings.json
// "env" block takes the variables (Claude Code applies them to every
// session), and tollgate's receiver (/otlp/v1/logs) records each
// claude_code.api_request as it happens. TelemetryMarker marks the block
// as tollgate's, so --uninstall removes only what tollgate wrote.
const TelemetryMarker = "TOLLGATE_TELEMETRY"

// TelemetryEnv is the environment that exports Claude Code's events to the
// tollgate at url (http://127.0.0.1:47631) with token; protocol is
// http/json or http/protobuf.
func TelemetryEnv(url, token, protocol string) map[string]string {
	return map[string]string{
		"CLAUDE_CODE_ENABLE_TELEMETRY": "1",
		"OTEL_LOGS_EXPORTER":           "otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL":  protocol,
		"OTEL_EXPORTER_OTLP_ENDPOINT":  url + "/otlp",
		// Sent as written: a plain space arrives as "Bearer TOKEN"
		// (shared/data/otel/README.md).
		"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer " + token,
		TelemetryMarker:              "1",
	}
}

// EnvKeys lists an environment's keys in order, for printing.
func EnvKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InstallTelemetry merges env into the settings' "env" block (keeping every
// other key, with a backup of the old file). The block holds the harness
// token, so the file is left readable by its owner only. It returns the
// backup's path.
func InstallTelemetry(path string, env map[string]string) (string, error) {
	settings, err := readClaudeSettings(path)
	if errors.Is(err, os.ErrNotExist) {
		settings, err = map[string]any{}, nil
	}
	if err != nil {
		return "", err
	}
	block := map[string]any{}
	if old, ok := settings["env"]; ok {
		m, ok := old.(map[string]any)
		if !ok {
			return "", fmt.Errorf("%s: \"env\" is not an object; fix it by hand first", path)
		}
		block = m
	}
	for k, v := range env {
		block[k] = v
	}
	settings["env"] = block
	return writeSettingsFile(path, settings, true) // the block holds the harness token
}

// UninstallTelemetry removes the variables tollgate wrote (the block
// carries TelemetryMarker); removed is 0 when there was nothing of
// tollgate's.
func UninstallTelemetry(path string) (removed int, backup string, err error) {
	settings, err := readClaudeSettings(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	block, _ := settings["env"].(map[string]any)
	if block[TelemetryMarker] == nil {
		return 0, "", nil
	}
	for k := range TelemetryEnv("", "", "") {
		if _, ok := block[k]; ok {
			delete(block, k)
			removed++
		}
	}
	if len(block) == 0 {
		delete(settings, "env")
	}
	backup, err = writeSettingsFile(path, settings, false)
	return removed, backup, err
}

// TelemetryInstalled says whether the settings carry tollgate's telemetry
// block.
func TelemetryInstalled(path string) bool {
	settings, err := readClaudeSettings(path)
	if err != nil {
		return false
	}
	block, _ := settings["env"].(map[string]any)
	return block[TelemetryMarker] != nil
}
