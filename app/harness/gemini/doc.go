// Package gemini is Gemini CLI: its session files read into the importer's
// records (a Format registered with importer.Register under Harness), and
// its Integration, observed and never gated (integration.go says why: its
// PreCompress hook is advisory).
//
// Gemini CLI (npm @google/gemini-cli; read at 0.61.0 and in
// google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts
// and chatRecordingTypes.ts, 2026-12-01) appends one JSON object a line to
// ~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl
// (a subagent's to chats/<parent session id>/<session id>.jsonl):
//
//   - a metadata line {"sessionId","projectHash","startTime","lastUpdated",
//     "kind"} starts the file, and again each time the session is resumed;
//   - a message line {"id","timestamp","type":"user"|"gemini"|"info"|…,
//     "content",…}; a "gemini" message carries "model" and "tokens":
//     {input, output, cached, thoughts, tool, total}, the usageMetadata of
//     the API response (promptTokenCount, candidatesTokenCount,
//     cachedContentTokenCount, thoughtsTokenCount, toolUsePromptTokenCount,
//     totalTokenCount). A message is written again whole when it changes
//     (its tokens arrive, a tool call is added): the same id on a later
//     line is the same request;
//   - {"$set":{…}} updates metadata, and {"$set":{"messages":[…]}} writes
//     the whole history anew (after a resume, a rollback, a compression, a
//     masking); {"$rewindTo": id} drops messages from the history. Neither
//     is a model call. A request the user later rewound was still billed,
//     so it stays.
//   - Two of those rewrites change what the provider has cached, and are
//     folds. A compression (context/chatCompressionService.ts) replaces the
//     history with a user message holding the model's <state_snapshot>
//     summary (seen in the 0.61.0 program's files: the history set right
//     after it starts with the session context, then that snapshot, then
//     the model's "Got it."): a snapshot message id not seen before is a
//     summary fold, its checkpoint estimated from the snapshot's length at
//     4 characters a token. A masking (context/toolOutputMaskingService.ts)
//     replaces old tool outputs with <tool_output_masked> notes: a history
//     set holding more of them than the previous one is a prune fold of
//     that many units (read from the source; the test shapes its lines from
//     it). Neither logs its trigger: it is recorded as auto. The summary
//     calls of a compression are not in the file (they bypass the chat's
//     recording), so the fold has no summary usage.
//
// Versions before the JSON Lines format wrote one pretty-printed
// session-*.json document; Gemini CLI converts such a file to .jsonl when
// it resumes it. Those files are not JSON Lines and are not read.
//
// Usage: promptTokenCount includes the cached tokens and Gemini bills them
// at its cache price (https://ai.google.dev/gemini-api/docs/pricing, read
// 2026-12-01), so input = input − cached; the tool-use prompt is input too;
// thoughts are billed as output. Writes are not billed (implicit caching
// has no write price), so CacheWrite stays 0.
//
// testdata holds real sessions Gemini CLI 0.61.0 wrote against the test
// provider: real-0.61.0.jsonl (three requests) and
// real-0.61.0-compression.jsonl (a compression), read by this package's
// and app/imports' tests.
package gemini
