package harness

import (
	"os"
	"path/filepath"

	"tollgate/app/home"
	"tollgate/guard/api"
)

// Gemini is Gemini CLI's integration name (its sessions' harness name too).
const Gemini = "gemini"

// GeminiVerdict is what GET /v1/engines and doctor say about Gemini CLI
// (the Integrations page adds the upstream change gating needs), read in
// google-gemini/gemini-cli (0.56 nightly source and the 0.61.0 bundle,
// 2026-12-01): its PreCompress hook is advisory — chatCompressionService.ts
// awaits firePreCompressEvent(trigger) and discards the result, and the
// hook's output type (hooks/types.ts PreCompressOutput) has no decision
// field; it fires on every turn, before the threshold check, so it does not
// even say that a compaction will happen — and client.ts masks old tool
// outputs on every turn (toolOutputMaskingService.ts) with no hook at all.
const GeminiVerdict = "observed, cannot be gated: its PreCompress hook is advisory (the result is discarded; it fires every turn) " +
	"and it masks old tool outputs every turn without a hook; tollgate follows and imports its sessions (~/.gemini/tmp, or tollgate import --harness gemini DIR)"

// geminiStatus reports Gemini CLI as observed once its chats folder holds
// a session: <GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/chats. One
// directory listing and a stat per project: cheap enough for every call.
func geminiStatus(p home.Probe) api.Integration {
	in := api.Integration{Name: Gemini, Detail: "not seen: no session under ~/.gemini/tmp", Note: GeminiVerdict}
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
