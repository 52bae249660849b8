// Package importer reads the session logs agent harnesses write — Claude
// Code transcripts, Codex rollouts, and the formats registered by their own
// packages (dsh session logs, Gemini CLI sessions) — and turns them
// into neutral records: the session, its billed requests (disjoint usage,
// ARCHITECTURE.md, "The API") and its folds (context rewrites). It does no I/O of its own
// beyond the reader it is given, prices nothing and stores nothing: the app
// prices the records and storage keeps them.
//
// # Passes, offsets and state
//
// A log is read in passes. Parse reads from wherever the previous pass
// stopped and returns, with the records, how many bytes it consumed (only
// whole lines: a line still being written is left for the next pass) and a
// small state to hand back next time (line count, session id, the last
// message seen, …). Requests carry ids that are stable across passes and
// copies of a file, so storing a pass twice adds nothing; a message whose
// streamed snapshots straddle two passes comes back with larger figures and
// the store keeps the larger ones.
//
// # Speed
//
// Most bytes of a transcript are tool output and progress lines that carry
// no usage. Each parser first asks, with bytes.Contains, whether a line can
// carry what it reads ("usage", compact_boundary, token_count, …) and
// decodes only those lines, in place, with a small scanner that skips every
// value it does not need (see jscan.go). Every line is still checked to be
// framed as a JSON object, so a truncated or corrupt line is an error that
// names the file and line.
//
// # Formats in their own packages
//
// Formats other than Claude Code's and Codex's live in packages of their
// own that register with Register (line formats: app/importer/dsh,
// app/importer/gemini) or RegisterDatabase (app/importer/opencode); a
// program reads them by importing those packages, as app/imports does.
package importer
