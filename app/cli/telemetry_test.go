package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"tollgate/app/apptest"
	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
	"tollgate/storage"
)

// claudeEvent is one api_request as Claude Code 2.1.332 sends it.
func claudeEvent(t *testing.T) []byte {
	t.Helper()
	logs := plog.NewLogs()
	rl := logs.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr("claude_code.api_request")
	a := lr.Attributes()
	a.PutStr("session.id", "cli-s")
	a.PutStr("prompt.id", "p")
	a.PutInt("event.sequence", 3)
	a.PutStr("model", "claude-sonnet-4-5")
	a.PutInt("input_tokens", 12)
	a.PutInt("output_tokens", 34)
	a.PutInt("cache_read_tokens", 5600)
	b, err := plogotlp.NewExportRequestFromLogs(logs).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The printed settings are the ones that work: an exporter configured
// from them exactly as Claude Code's SDK reads them (endpoint + /v1/logs,
// the header as written) is recorded; the Integrations list then says
// telemetry arrives. --install merges them into settings.json keeping the
// user's keys; --uninstall removes only tollgate's.
func TestTelemetryClaudeCode(t *testing.T) {
	svc, dir := apptest.Start(t, "")
	var out, errb bytes.Buffer
	stdio := IO{Stdout: &out, Stderr: &errb}
	if err := Telemetry(context.Background(), []string{"claude-code", "--home", dir, "--protocol", "http/protobuf"}, stdio); err != nil {
		t.Fatal(err, errb.String())
	}
	env := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
			env[k] = strings.Trim(v, "'")
		}
	}
	if env["CLAUDE_CODE_ENABLE_TELEMETRY"] != "1" || env["OTEL_LOGS_EXPORTER"] != "otlp" || env["OTEL_EXPORTER_OTLP_ENDPOINT"] != svc.URL+"/otlp" ||
		env["OTEL_EXPORTER_OTLP_PROTOCOL"] != "http/protobuf" {
		t.Fatalf("%q", out.String())
	}
	name, value, _ := strings.Cut(env["OTEL_EXPORTER_OTLP_HEADERS"], "=")
	req, _ := http.NewRequest(http.MethodPost, env["OTEL_EXPORTER_OTLP_ENDPOINT"]+"/v1/logs", bytes.NewReader(claudeEvent(t)))
	req.Header.Set(name, value)
	req.Header.Set("Content-Type", "application/x-protobuf")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	var s storage.Session
	if st, raw := get(t, svc.URL+"/v1/sessions/claude-code:cli-s", svc.Token(), &s); st != http.StatusOK || s.Requests != 1 || s.Tokens.CacheRead != 5600 {
		t.Fatalf("%d %s", st, raw)
	}
	var engines struct {
		Integrations []api.Integration `json:"integrations"`
	}
	get(t, svc.URL+"/v1/engines", svc.Token(), &engines)
	found := false
	for _, in := range engines.Integrations {
		if in.Name == "claude-code" && strings.Contains(in.Detail, "receiving telemetry (last event ") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no telemetry on the Integrations list: %+v", engines.Integrations)
	}

	// --install into a settings.json with the user's own keys.
	settings := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(settings, []byte(`{"model":"opus","env":{"MY_VAR":"x"}}`), 0o600)
	out.Reset()
	if err := Telemetry(context.Background(), []string{"claude-code", "--home", dir, "--install", "--settings", settings}, stdio); err != nil {
		t.Fatal(err, errb.String())
	}
	var written struct {
		Model string            `json:"model"`
		Env   map[string]string `json:"env"`
	}
	raw, _ := os.ReadFile(settings)
	json.Unmarshal(raw, &written)
	if written.Model != "opus" || written.Env["MY_VAR"] != "x" || written.Env["OTEL_EXPORTER_OTLP_HEADERS"] != "Authorization=Bearer "+svc.Token() ||
		written.Env["OTEL_EXPORTER_OTLP_PROTOCOL"] != "http/json" {
		t.Fatalf("%s", raw)
	}
	if err := Telemetry(context.Background(), []string{"claude-code", "--uninstall", "--settings", settings}, stdio); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(settings)
	written.Env = nil
	json.Unmarshal(raw, &written)
	if written.Model != "opus" || len(written.Env) != 1 || written.Env["MY_VAR"] != "x" {
		t.Fatalf("after --uninstall: %s", raw)
	}
	if err := Telemetry(context.Background(), []string{"claude-code", "--protocol", "grpc"}, stdio); Exit(err, &errb) != 2 {
		t.Fatalf("grpc: %v", err)
	}
	// Codex and Gemini CLI: printed, pointing at the running tollgate.
	for h, want := range map[string]string{
		"codex":  `endpoint = "` + svc.URL + `/otlp/v1/logs"`,
		"gemini": `export GEMINI_TELEMETRY_OTLP_ENDPOINT=` + svc.URL + `/otlp`,
	} {
		out.Reset()
		if err := Telemetry(context.Background(), []string{h, "--home", dir}, stdio); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "Bearer "+svc.Token()) {
			t.Fatalf("%s: %s", h, out.String())
		}
	}
}

func get(t *testing.T, url, token string, out any) (int, []byte) {
	t.Helper()
	res, b := clienttest.Do(t, http.MethodGet, url, token, nil)
	if out != nil {
		json.Unmarshal(b, out)
	}
	return res.StatusCode, b
}
