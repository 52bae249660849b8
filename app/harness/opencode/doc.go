// Package opencode is the OpenCode integration (ARCHITECTURE.md,
// "OpenCode"): `tollgate hook opencode --install` writes the plugin the
// binary embeds (integrations/opencode) into OpenCode's global plugins/
// folder, with a shim that loads it once and a manifest of what it wrote,
// and Status tells this tollgate's files from an older one's. The plugin
// guards through an engine lease while OpenCode runs: it turns OpenCode's
// automatic compaction over to tollgate and asks once the context crosses
// OpenCode's own threshold.
//
// # Its logs
//
// OpenCode keeps its sessions in one SQLite database,
// $XDG_DATA_HOME/opencode/opencode.db (ocdb reads it read-only beside a
// running OpenCode: the "opencode" Format, a Database, session by
// session: usage per assistant message, compactions as folds).
//
// testdata/sample/opencode.db is a real database OpenCode 1.18.33 wrote
// under `opencode serve` and `opencode run --attach` with the plugin
// installed, against the test provider (test/harness,
// TOLLGATE_SAMPLE_DIR, 2026-12-01), its write-ahead log checkpointed into
// the copy: one session, 7 requests (5 turns and 2 summary calls), 2
// compactions (one the plugin allowed, one OpenCode ran after tollgate
// stopped). ocdb's TestRealOpenCodeSample reads a copy of it.
package opencode
