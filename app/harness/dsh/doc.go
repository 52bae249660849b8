// Package dsh is dsh: its session logs, format version 1, read into the
// importer's records (a Format registered with importer.Register under
// Name), and its Integration (the plugin, integrations/dsh, seen when it
// last ran: it asks tollgate over the API while dsh runs).
//
// A dsh session log is `session.jsonl`, or `session.jsonl.zstd` (also
// `.zst`): the same lines in a sequence of zstd frames, each frame holding
// whole lines or the start of lines that the next frames finish (a writer
// appends one frame per flush; `zstd session.jsonl` makes a valid one-frame
// file too). Skippable frames are ignored. An incomplete last frame is left
// for the next pass.
//
// Every line is one JSON object with a "type". The first line is the header:
//
//	{"type":"header","format":"dsh.session","version":1,"session":"s-8f3a",
//	 "startedAt":"2026-11-30T10:00:00Z","harnessVersion":"0.9.1",
//	 "provider":"deepseek","model":"deepseek-flash","profile":"deepseek-flash",
//	 "title":"refactor the parser","contextWindow":1048576,"thresholdTokens":838861}
//
// "format" must be "dsh.session" and "session" non-empty; "version" must be
// 1 — any other version is refused with an error that names it, before any
// other line is read (a newer dsh may change what the records mean). The
// session id is importer.SessionID(Name, session). Every other line has an "at" (RFC 3339)
// and one of these types; lines of any other type (user messages, tool
// results, …) are skipped, so dsh may add record types within version 1:
//
//	{"type":"request/context","at":…,"requestId":"r-17",
//	 "contextWindow":1048576,"thresholdTokens":838861}
//
// the window (and rewrite threshold) in force for the next request; the
// latest one is the session's.
//
//	{"type":"assistant/message","at":…,"id":"m-17","model":"deepseek-flash",
//	 "profile":"deepseek-flash","provider":"deepseek","purpose":"conversation",
//	 "usage":{"inputTokens":1200,"cacheReadTokens":250000,"cacheWriteTokens":0,
//	          "cacheWrite1hTokens":0,"outputTokens":900}}
//
// one billed request; "id" is required (it makes re-imports idempotent); a
// repeated id is the same request, with the larger figures; usage counts are
// disjoint exactly as in the API (inputTokens is uncached input only);
// "purpose" is conversation (default) or subagent; model, profile and
// provider default to the header's.
//
//	{"type":"compaction/summary","at":…,"id":"c-3","trigger":"pressure",
//	 "preTokens":830000,"summarizedTokens":544000,"retainedTokens":31000,
//	 "checkpointTokens":4100,
//	 "call":{"id":"m-90","model":"deepseek-flash","usage":{…as above…}}}
//
// a summary fold: the span before the last retainedTokens tokens was
// replaced by a checkpoint of checkpointTokens; "call" is the summary call,
// stored as a request of purpose compaction (id: call.id, else id + "/call")
// and attached to the fold.
//
//	{"type":"compaction/prune","at":…,"id":"p-4","trigger":"pressure",
//	 "preTokens":610000,"units":12,"shadowedTokens":31000,"fromTokens":200000}
//
// a prune fold: units tool results replaced in place by stubs, freeing
// shadowedTokens; fromTokens is where (in tokens after the envelope) the
// first pruned unit starts, when known.
//
//	{"type":"surfaceOp","at":…,"id":"op-9","op":"replace","kind":"prune",
//	 "cause":"p-4","preTokens":610000,"fromTokens":200000,
//	 "units":[{"id":"seq-12","tokens":5200}],"replacement":{"tokens":1300}}
//
// a replacement on the model-visible surface: units replaced by
// replacement; it shadows sum(units.tokens) − replacement.tokens tokens.
// With a "cause" naming a compaction record of the log it is part of that
// fold (its shadowed tokens and units are added to the fold when both are
// in the same pass); without one it is a fold of its own, of its "kind"
// (summary or prune). Ops other than "replace" are skipped.
//
// Triggers: "manual" is manual; auto, pressure and context-overflow are
// auto. preTokens is the context (prompt) size before the rewrite. Ids
// ("id", "call.id") are strings unique within the session.
//
// No dsh program runs here and no public log of it exists: the lines above
// are the format tollgate reads, and dsh_test.go and the cross-format tests
// (app/harness/all) build their logs from this definition.
package dsh
