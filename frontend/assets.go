// Package frontend embeds the built UI (frontend/dist, made by `make
// frontend`). dist/.gitkeep is committed so the embed compiles before the
// first build; such a build serves a page that says how to build the UI.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built UI, rooted at dist/.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded directory: cannot fail
	}
	return sub
}

// Built reports whether the UI was built into this binary.
func Built() bool {
	_, err := fs.Stat(Dist(), "index.html")
	return err == nil
}
