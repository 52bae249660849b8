// Package importer is the core of reading harness logs: the neutral
// records a log turns into (the session, its billed requests with disjoint
// usage — ARCHITECTURE.md, "The API" — and its folds, the context
// rewrites), the driver that reads a log in passes, and the registry of
// the harnesses' log formats. It does no I/O of its own beyond the reader
// it is given, prices nothing and stores nothing: the app prices the
// records and storage keeps them.
//
// # Formats register themselves
//
// Each harness's folder (app/harness/<name>) registers a Format from an
// init function, the way an image format registers with
// image.RegisterFormat: its name and label, where its logs live, the one
// file filter the walk and the follower share, detection, which logs are
// a subagent's, the parser of a pass (or, for a harness that keeps a
// database, its Database), and optionally a fold Predictor. The generic
// rooms (app/imports, app/follow, app/cli, …) loop over Formats and never
// import a harness folder; app/harness/all links them all in.
//
// Rules every format shares are written here once: a session's id is
// SessionID(harness, id), a fold's actual cold tokens are set by
// Fold.SetActual, a fold's id is FoldID, what started a request is named
// by StartedByName.
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
// decodes only those lines, in place, with the small scanner of
// app/importer/jsonl that skips every value it does not need. Every line
// is still checked to be framed as a JSON object, so a truncated or
// corrupt line is an error that names the file and line.
package importer
