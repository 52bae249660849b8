// Package all links every harness folder into the binary: each registers
// its integration (app/harness) and its log format (app/importer) from its
// own init function. The composition root (app) imports it, as do the
// tests that need every harness registered; no other room does, so no
// generic room names a harness.
package all

import (
	_ "tollgate/app/harness/claudecode"
	_ "tollgate/app/harness/codex"
	_ "tollgate/app/harness/dsh"
	_ "tollgate/app/harness/gemini"
	_ "tollgate/app/harness/opencode"
	_ "tollgate/app/harness/opencode/ocdb"
	_ "tollgate/app/harness/reasonix"
)
