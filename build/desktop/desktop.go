// Package desktop holds tollgate's freedesktop.org files: the .desktop
// entry and the application icon in the hicolor sizes (PNG) plus a scalable
// SVG. They are the sources of the Debian package (build/debian/package.sh
// copies them) and, embedded here, of `tollgate install --user`, so the two
// installs can never ship different files.
//
// The icons are drawn in code (icons_test.go): `go generate ./build/desktop`
// rewrites them, and the test fails when the committed files drift from the
// drawing. The entry's Exec and TryExec say `tollgate` (found on PATH, as
// the package installs it to /usr/bin); `tollgate install --user` rewrites
// them to the absolute path it installs to.
package desktop

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
)

//go:generate go test -run TestIconsMatchDrawing -update .

// AppID is the name of the entry and of the icon in every theme folder.
const AppID = "tollgate"

//go:embed tollgate.desktop
var entry []byte

//go:embed icons
var icons embed.FS

// Entry returns the .desktop entry (Exec=tollgate).
func Entry() []byte { return append([]byte(nil), entry...) }

// IconSizes are the hicolor sizes the PNG icon is drawn at.
func IconSizes() []int { return []int{16, 22, 24, 32, 48, 64, 128, 256, 512} }

// Icon is one icon file; Path is relative to a hicolor theme folder
// (e.g. "48x48/apps/tollgate.png", "scalable/apps/tollgate.svg").
type Icon struct {
	Path string
	Data []byte
}

// IconPath is the theme-relative path of the PNG of one size.
func IconPath(size int) string { return fmt.Sprintf("%dx%d/apps/%s.png", size, size, AppID) }

// ScalableIconPath is the theme-relative path of the SVG.
const ScalableIconPath = "scalable/apps/" + AppID + ".svg"

// Icons returns every icon: the PNGs, smallest first, then the SVG.
func Icons() ([]Icon, error) {
	var out []Icon
	paths := make([]string, 0, len(IconSizes())+1)
	for _, s := range IconSizes() {
		paths = append(paths, IconPath(s))
	}
	paths = append(paths, ScalableIconPath)
	for _, p := range paths {
		b, err := fs.ReadFile(icons, path.Join("icons/hicolor", p))
		if err != nil {
			return nil, fmt.Errorf("embedded icon %s: %w", p, err)
		}
		out = append(out, Icon{Path: p, Data: b})
	}
	return out, nil
}
