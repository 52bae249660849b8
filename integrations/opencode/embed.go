// Package opencode ships tollgate's OpenCode plugin (index.js and lib/,
// the JavaScript beside this file) inside the tollgate binary, so
// `tollgate hook opencode --install` can write it into OpenCode's config
// folder on a machine that has no checkout (the .deb ships no
// integrations/). The plugin is described in index.js and integrations/README.md
// ("OpenCode"); the installer is app/harness/opencode.
package opencode

import "embed"

// Files holds index.js and lib/*.js with their paths as in this folder.
// Tests and package.json stay out: only what OpenCode loads ships.
//
//go:embed index.js lib/*.js
var Files embed.FS
