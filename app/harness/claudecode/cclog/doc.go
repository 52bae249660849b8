// Package cclog reads Claude Code's transcripts, registered as the
// "claude-code" format (format.go), and builds the trace its fold
// predictor replays (trace.go, for ../ccfold). A transcript is
// ~/.claude/projects/<project>/<session>.jsonl with
// <session>/subagents/agent-*.jsonl beside it: one JSON object per line.
//
//   - Assistant lines ("type":"assistant") carry message.id, message.model
//     and message.usage. Claude Code writes one line per content block of a
//     streamed message, each with the usage known so far: the lines of one
//     message (same message.id and requestId) are one request, and its
//     figures are the field-wise maximum of its lines — the final ones, as
//     the counts only grow.
//   - usage.input_tokens excludes the cache; cache_creation.ephemeral_5m_…
//     and ephemeral_1h_… split the writes (without that object,
//     cache_creation_input_tokens counts as 5-minute writes).
//   - A fold is {"type":"system","subtype":"compact_boundary",
//     "compactMetadata":{"trigger":"auto"|"manual","preTokens":N}}. The user
//     line after it ("isCompactSummary":true) holds the summary's text: only
//     its length is read, to estimate the checkpoint at 4 characters a token.
//   - The summary call lives in <session>/subagents/agent-acompact-*.jsonl
//     (purpose compaction); other agent-*.jsonl files are subagents (purpose
//     subagent), as are lines flagged isSidechain in a main transcript.
//   - Lines of model "<synthetic>" are Claude Code's own notices, not
//     billed requests, and are skipped.
//   - What started a request (Request.StartedBy) is read from the user
//     lines since the thread's previous request, by their first bytes
//     only (a tool result is never scanned): content beginning with
//     "<task-notification>" (a background task finished), a tool_result
//     block (a person's answer when it says "User has answered your
//     questions" or "User has approved your plan"), "[Request
//     interrupted", isMeta lines (hook context or other harness notes), a
//     compact summary; anything else is a prompt. Each file is one thread
//     (Request.Thread): "" for the main transcript, the agent's file stem
//     for a subagent or summary call, whose first request is a start.
//
// The session id is importer.SessionID(Name, the transcript's uuid): the
// file name of a main transcript, the folder above subagents/ for a
// subagent's, else the lines' sessionId.
//
// A real transcript Claude Code 2.1.332 wrote (a session with a manual
// compaction, against the test provider) is in ../testdata/sample.
package cclog
