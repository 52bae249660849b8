// Package codex is the Codex CLI integration (ARCHITECTURE.md,
// "Integrations"): a PreCompact command hook (`tollgate hook codex`, stdin →
// stdout) and its PostCompact twin, installed in Codex's hooks.json.
//
// What Codex's hook can do (@openai/codex 0.171.0; codex-rs/hooks/src/
// events/compact.rs and codex-rs/core/src/hook_runtime.rs, openai/codex
// PR 19905, read 2026-12-01): a PreCompact hook that prints
// {"continue": false, "stopReason": "…"} stops the compaction, and Codex
// then ends the current turn ("turn interrupted"; `codex exec` exits 1).
// `decision: "block"` and exit code 2 are ignored by design. It cannot skip
// only the compaction and let the turn go on: the conversation keeps its
// full history, and Codex proposes the compaction again on the next turn.
//
// One PreCompact event is decided like this:
//
//  1. register an engine (harness "codex") for the life of the hook;
//  2. record the rollout's usage so far with its parser (cxlog)
//     (ids are the cumulative token counts, so a later `tollgate import`
//     of the same rollout stores nothing twice);
//  3. price the compaction as OpenAI bills it: the compaction call (the
//     Responses API request that carries the whole history and returns the
//     summary; a positional cache, 128-token steps from 1,024, writes not
//     billed — pricing's OpenAI model) and the next request, which re-reads
//     everything after the envelope cold (the summary and the user messages
//     Codex carries over);
//  4. ask (session importer.SessionID(Name, session_id), turn = turn_id, deadline = what
//     is left of the hook's timeout, counted from its start, less a
//     margin: reading and recording spend from the same budget);
//  5. a decline prints {"continue":false,"stopReason":"…"} on stdout, exit
//     0; the gate mutes the rest of that turn, and Codex's next turn (a new
//     turn_id) is asked again.
//
// tollgate not running, malformed input, or any fault of ours → allow (no
// output, exit 0), say why on stderr: a guard fault never strands Codex.
//
// Like any harness it reaches tollgate only through guard/client.
//
// # Its logs
//
// Codex writes a rollout per session, $CODEX_HOME/sessions/YYYY/MM/DD/
// rollout-<time>-<uuid>.jsonl (cxlog reads them: the "codex" Format, its
// lines described there).
//
// testdata/sample holds a real rollout Codex CLI 0.171.0 wrote under
// `codex exec` against the test provider (test/harness, TOLLGATE_SAMPLE_DIR,
// 2026-12-01): 61 lines, 4 requests, 2 remote compactions (compacted items
// with a replacement_history), and the turn a decline ended
// (turn_aborted). cxlog's TestRealCodexSample reads it.
package codex
