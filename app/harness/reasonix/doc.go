// Package reasonix is the DeepSeek-Reasonix integration (ARCHITECTURE.md,
// "Integrations"): `tollgate ext reasonix` is
// a sidecar speaking Reasonix's Extension Protocol v2 — JSON-RPC 2.0, one
// JSON object per line on stdin/stdout — packaged as a Reasonix plugin.
//
// Observed with reasonix 1.38.11 (and what this sidecar relies on):
//
//   - Reasonix starts the sidecar anew for every `reasonix run` (and every
//     interactive session), with $REASONIX_PLUGIN_ROOT and
//     $REASONIX_PLUGIN_NAME set, and sends extension/initialize
//     ({protocolId:"reasonix.extension.v2", protocolVersion:"2",
//     manifest:{intercepts,capabilities,provides}, session:{sessionId:
//     "boot-1", workspaceRoot, generation}, capabilities}); the answer is
//     {protocolVersion:"2", name, version, subscriptions, stateSchemaVersion:0}
//     and must not subscribe beyond the manifest's intercepts.
//   - The session id it sends is a boot counter ("boot-1"), not the
//     session's: the sidecar names the tollgate session after Reasonix's
//     newest session folder for the workspace
//     (<reasonix home>/projects/<workspace, / → ->/sessions-v4/<id>), else
//     after the workspace.
//   - Before a summary it sends extension/intercept {event:
//     "compaction.prepare", seq, payload:{messages:[…the span to be
//     summarized, without the system message…]}, timeoutMillis}; the answer
//     {decision:"continue"} or {decision:"block", reason} (a block skips
//     the summary and the turn goes on with the full history). A run may
//     compact twice (a convergence summary): a decline mutes the rest of
//     the run, which is the tollgate turn ("run-<random>"), so a later run
//     asks again. The same event also arrives as an extension/event
//     notification afterwards; it is ignored.
//   - compaction.complete ({summary}) follows a summary that landed: the
//     allowed rewrite's outcome is reported (only the summary's presence is
//     read, never its text).
//   - provider.response intercepts carry each main request's usage
//     ({promptTokens, completionTokens, cacheHitTokens, cacheMissTokens});
//     the sidecar answers continue at once and records it (summary calls
//     are not reported).
//   - `seq` restarts with every sidecar. extension/shutdown
//     ({timeoutMillis}) is answered {} at exit.
//
// Not answered in time (timeoutMillis less a margin) → block, reason
// timeout. tollgate unreachable → continue (unguarded).
//
// Like any harness it reaches tollgate only through guard/client.
//
// Reasonix keeps no log tollgate imports: its usage arrives live, through
// the provider.response intercepts above.
//
// testdata/sample holds one real run's frames, both ways, between
// Reasonix 1.38.11 and this sidecar (test/harness, TOLLGATE_SAMPLE_DIR,
// 2026-12-01): initialize, two compaction.prepare (intercept and event),
// compaction.complete, provider.response and shutdown, and the sidecar's
// answers.
package reasonix
