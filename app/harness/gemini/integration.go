package gemini

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Gemini CLI is observed, never gated (ARCHITECTURE.md, "Integrations"):
// its sessions are imported and priced, its telemetry received, but
// nothing it runs can decline a rewrite.
func init() {
	harness.Register(harness.Integration{
		Name:  Harness,
		Label: "Gemini CLI",
		Order: 60,
		About: "Gemini CLI cannot be gated: its PreCompress hook is advisory (chatCompressionService.ts discards its result, and it fires every turn) " +
			"and toolOutputMaskingService.ts masks old tool outputs every turn with no hook. " +
			"Gating needs a PreCompress decision Gemini CLI honours and a hook before masking (google-gemini/gemini-cli, packages/core/src/context/). " +
			"tollgate follows its sessions in ~/.gemini/tmp while it runs (see Followed logs below) and shows every cache break in the ledger; to bring in sessions from another folder:",
		Setup:    "tollgate import --harness " + Harness + " DIR",
		Observed: true,
		Status:   status,
		Doctor: &harness.Doctor{Check: func(_ harness.DoctorEnv, in api.Integration) harness.Assessment {
			// Imported and priced, never gated: nothing to fix from here.
			return harness.Assessment{Grade: harness.GradeInfo, Facts: map[string]any{"state": in.State}}
		}},
		Telemetry: &harness.Command{Run: telemetry},
		OTel:      &harness.OTel{Namespace: "gemini_cli", Service: "gemini-cli"},
	})
}

// verdict is what GET /v1/engines and doctor say about Gemini CLI
// (the Integrations page adds the upstream change gating needs), read in
// google-gemini/gemini-cli (0.56 nightly source and the 0.61.0 bundle,
// 2026-12-01): its PreCompress hook is advisory — chatCompressionService.ts
// awaits firePreCompressEvent(trigger) and discards the result, and the
// hook's output type (hooks/types.ts PreCompressOutput) has no decision
// field; it fires on every turn, before the threshold check, so it does not
// even say that a compaction will happen — and client.ts masks old tool
// outputs on every turn (toolOutputMaskingService.ts) with no hook at all.
const verdict = "observed, cannot be gated: its PreCompress hook is advisory (the result is discarded; it fires every turn) " +
	"and it masks old tool outputs every turn without a hook; tollgate follows and imports its sessions (~/.gemini/tmp, or tollgate import --harness gemini DIR)"

// status reports Gemini CLI as observed once its chats folder holds a
// session: <GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/chats. One
// directory listing and a stat per project: cheap enough for every call.
func status(p home.Probe) api.Integration {
	in := api.Integration{Name: Harness, Detail: "not seen: no session under ~/.gemini/tmp", Note: verdict}
	base := p.Getenv("GEMINI_CLI_HOME")
	if base == "" {
		d, err := home.HarnessDir(p.Getenv, "HOME", "")
		if err != nil {
			return in
		}
		base = d
	}
	chats, _ := filepath.Glob(filepath.Join(base, ".gemini", "tmp", "*", "chats"))
	for _, dir := range chats {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			in.State = api.IntegrationObserved
			in.Detail = "sessions in " + filepath.Dir(filepath.Dir(dir))
			break
		}
	}
	return in
}

// telemetry is `tollgate telemetry gemini`: it prints Gemini CLI's
// GEMINI_TELEMETRY_* variables, from its documentation (unlike Claude
// Code's settings, untried against tollgate here); tollgate writes them
// nowhere.
func telemetry(_ context.Context, args []string, env harness.Env) error {
	var dir string
	fs := harness.NewFlags("telemetry "+Harness, env.IO, &dir)
	if err := harness.Parse(fs, args); err != nil {
		return err
	}
	url, token, err := env.Telemetry(dir)
	if err != nil {
		return err
	}
	vars := map[string]string{
		"GEMINI_TELEMETRY_ENABLED":       "true",
		"GEMINI_TELEMETRY_TARGET":        "local",
		"GEMINI_TELEMETRY_OTLP_ENDPOINT": url + "/otlp",
		"GEMINI_TELEMETRY_OTLP_PROTOCOL": "http",
		"OTEL_EXPORTER_OTLP_HEADERS":     "Authorization=Bearer " + token,
	}
	fmt.Fprintln(env.Stdout, "# Gemini CLI → tollgate over OpenTelemetry (from Gemini CLI's documentation; not yet run against tollgate here)")
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(env.Stdout, "export %s=%s\n", k, home.ShellQuote(vars[k]))
	}
	return nil
}
