// Package claudecode is the Claude Code integration (ARCHITECTURE.md,
// "Integrations"): a PreCompact hook, run as a
// command (`tollgate hook claude-code`, stdin → stdout) or served as an HTTP
// hook (POST /v1/hooks/claude-code). Either way one PreCompact event is
// decided like this:
//
//  1. register an engine (harness "claude-code") for the life of the hook;
//  2. record the transcript's usage so far with its parser
//     (cclog: ids "<message id>:<request id>", so a later
//     `tollgate import` of the same transcript stores nothing twice),
//     subagents' transcripts included;
//  3. price the compaction: Claude Code summarizes the whole conversation
//     since the last compact_boundary, so the surface is that conversation,
//     one unit per request (the tokens its prompt added, each ending at a
//     cache breakpoint, as Claude Code marks every request's end) plus the
//     input still pending; the envelope is the cached prefix of the first
//     request after the last fold, else the smallest non-zero cache read;
//     what the request after the compaction re-reads in full comes from
//     the fold predictor (ccfold: the summary as the
//     checkpoint, restored files and the base as restoredTokens, the band
//     and parts as the request's prediction);
//  4. ask (session importer.SessionID(Name, session_id), turn = prompt_id, deadline =
//     the hook's timeout less a margin);
//  5. a decline prints {"decision":"block","reason":"…"} on stdout, exit 0
//     (verified with Claude Code 2.1.332: a block stops manual and automatic
//     compaction, and an automatic turn then goes on with its full history).
//
// tollgate not running, malformed input, or any fault of ours → allow, say
// why on stderr, exit 0: a guard fault never blocks the engine.
//
// Like any harness it reaches tollgate only through guard/client.
//
// # Its logs
//
// Claude Code keeps a transcript per session under
// ~/.claude/projects/<project>/<session uuid>.jsonl, its subagents' beside
// it in <session uuid>/subagents/agent-*.jsonl (cclog reads them: the
// "claude-code" Format, its lines described there); ccfold predicts what
// each compaction costs from them, and cctool decodes the file tools'
// inputs and results the prediction needs.
//
// testdata/sample holds a real session Claude Code 2.1.332 wrote against
// the test provider (test/harness, TOLLGATE_SAMPLE_DIR, 2026-12-01): a main
// transcript of 103 lines with 6 requests and 2 compactions (a manual
// /compact and an allowed automatic one; a declined one left no boundary)
// and one subagent's transcript. cclog's TestRealClaudeCodeSample reads it.
package claudecode
