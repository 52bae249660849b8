package desktop

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite icons/ from the drawing")

// The icon: a toll barrier (post, foot, striped arm) and a coin on a blue
// tile. Coordinates are in a 512-unit square, shared by the SVG and the
// rasteriser below, so every size is the same drawing.
var (
	tileBlue   = color.NRGBA{0x24, 0x58, 0xd6, 0xff} // the tray's "ask" blue
	gateWhite  = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	stripeRed  = color.NRGBA{0xd3, 0x2f, 0x2f, 0xff}
	coinGold   = color.NRGBA{0xf6, 0xb9, 0x1a, 0xff}
	coinShadow = color.NRGBA{0xc9, 0x8a, 0x00, 0xff}
)

type shape struct {
	col    color.NRGBA
	inside func(x, y float64) bool
	svg    string
}

func roundRect(x0, y0, x1, y1, r float64) func(x, y float64) bool {
	return func(x, y float64) bool {
		if x < x0 || x > x1 || y < y0 || y > y1 {
			return false
		}
		cx := math.Max(x0+r, math.Min(x, x1-r))
		cy := math.Max(y0+r, math.Min(y, y1-r))
		return math.Hypot(x-cx, y-cy) <= r
	}
}

func capsule(ax, ay, bx, by, w float64) func(x, y float64) bool {
	return func(x, y float64) bool {
		dx, dy := bx-ax, by-ay
		t := math.Max(0, math.Min(1, ((x-ax)*dx+(y-ay)*dy)/(dx*dx+dy*dy)))
		return math.Hypot(x-(ax+t*dx), y-(ay+t*dy)) <= w/2
	}
}

func ring(cx, cy, r0, r1 float64) func(x, y float64) bool {
	return func(x, y float64) bool { d := math.Hypot(x-cx, y-cy); return d >= r0 && d <= r1 }
}

func hex(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

func drawing() []shape {
	return []shape{
		{tileBlue, roundRect(32, 32, 480, 480, 96), `<rect x="32" y="32" width="448" height="448" rx="96" fill="` + hex(tileBlue) + `"/>`},
		{gateWhite, roundRect(112, 200, 168, 400, 12), `<rect x="112" y="200" width="56" height="200" rx="12" fill="` + hex(gateWhite) + `"/>`},
		{gateWhite, roundRect(84, 384, 196, 424, 14), `<rect x="84" y="384" width="112" height="40" rx="14" fill="` + hex(gateWhite) + `"/>`},
		{gateWhite, capsule(140, 264, 432, 264, 52), `<line x1="140" y1="264" x2="432" y2="264" stroke="` + hex(gateWhite) + `" stroke-width="52" stroke-linecap="round"/>`},
		{stripeRed, roundRect(220, 238, 270, 290, 0), `<rect x="220" y="238" width="50" height="52" fill="` + hex(stripeRed) + `"/>`},
		{stripeRed, roundRect(320, 238, 370, 290, 0), `<rect x="320" y="238" width="50" height="52" fill="` + hex(stripeRed) + `"/>`},
		{coinGold, ring(352, 150, 0, 62), `<circle cx="352" cy="150" r="62" fill="` + hex(coinGold) + `"/>`},
		{coinShadow, ring(352, 150, 32, 44), `<circle cx="352" cy="150" r="38" fill="none" stroke="` + hex(coinShadow) + `" stroke-width="12"/>`},
	}
}

func svg() []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">` + "\n")
	b.WriteString("  <title>tollgate</title>\n")
	for _, s := range drawing() {
		b.WriteString("  " + s.svg + "\n")
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// raster draws the icon at size×size, supersampled (8×8 up to 64 px, 4×4
// above) and blended source-over in drawing order.
func raster(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	ss := 4
	if size <= 64 {
		ss = 8
	}
	scale := 512 / float64(size)
	for _, s := range drawing() {
		for py := 0; py < size; py++ {
			for px := 0; px < size; px++ {
				hits := 0
				for sy := 0; sy < ss; sy++ {
					for sx := 0; sx < ss; sx++ {
						x := (float64(px) + (float64(sx)+0.5)/float64(ss)) * scale
						y := (float64(py) + (float64(sy)+0.5)/float64(ss)) * scale
						if s.inside(x, y) {
							hits++
						}
					}
				}
				if hits == 0 {
					continue
				}
				a := float64(hits) / float64(ss*ss)
				dst := img.NRGBAAt(px, py)
				da := float64(dst.A) / 255
				oa := a + da*(1-a)
				mix := func(sc, dc uint8) uint8 {
					return uint8(math.Round((float64(sc)*a + float64(dc)*da*(1-a)) / oa))
				}
				img.SetNRGBA(px, py, color.NRGBA{mix(s.col.R, dst.R), mix(s.col.G, dst.G), mix(s.col.B, dst.B), uint8(math.Round(oa * 255))})
			}
		}
	}
	return img
}

// TestIconsMatchDrawing keeps icons/ equal to the drawing above (pixels, so
// a different PNG encoder does not count as drift). -update rewrites them.
func TestIconsMatchDrawing(t *testing.T) {
	for _, size := range IconSizes() {
		want := raster(size)
		file := filepath.Join("icons/hicolor", IconPath(size))
		if *update {
			var buf bytes.Buffer
			if err := png.Encode(&buf, want); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run `go generate ./build/desktop`)", err)
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if got.Bounds() != want.Bounds() {
			t.Fatalf("%s: %v, want %v", file, got.Bounds(), want.Bounds())
		}
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				if color.NRGBAModel.Convert(got.At(x, y)) != want.NRGBAAt(x, y) {
					t.Fatalf("%s: pixel (%d,%d) differs from the drawing; run `go generate ./build/desktop`", file, x, y)
				}
			}
		}
	}
	file := filepath.Join("icons/hicolor", ScalableIconPath)
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, svg(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(b, svg()) {
		t.Fatalf("%s differs from the drawing (%v); run `go generate ./build/desktop`", file, err)
	}
}

// TestIconsEmbedded: every size and the SVG are in the binary.
func TestIconsEmbedded(t *testing.T) {
	icons, err := Icons()
	if err != nil {
		t.Fatal(err)
	}
	if len(icons) != len(IconSizes())+1 {
		t.Fatalf("%d icons, want %d", len(icons), len(IconSizes())+1)
	}
	for i, size := range IconSizes() {
		cfg, err := png.DecodeConfig(bytes.NewReader(icons[i].Data))
		if err != nil || cfg.Width != size || cfg.Height != size {
			t.Errorf("%s: %dx%d, %v", icons[i].Path, cfg.Width, cfg.Height, err)
		}
	}
	if last := icons[len(icons)-1]; last.Path != "scalable/apps/tollgate.svg" || !bytes.Contains(last.Data, []byte("<svg")) {
		t.Errorf("last icon %s is not the SVG", last.Path)
	}
}

// TestEntry checks the keys a launcher relies on. The entry keeps to the
// Desktop Entry Specification 1.4, what Debian 12's desktop-file-validate
// knows; that runs on it in test/package-test.sh.
func TestEntry(t *testing.T) {
	sc := bufio.NewScanner(bytes.NewReader(Entry()))
	keys := map[string]string{}
	line := 0
	for sc.Scan() {
		line++
		l := sc.Text()
		if line == 1 {
			if l != "[Desktop Entry]" {
				t.Fatalf("first line %q, want [Desktop Entry]", l)
			}
			continue
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) != k {
			t.Fatalf("line %d %q: want Key=Value", line, l)
		}
		if _, dup := keys[k]; dup {
			t.Fatalf("line %d: duplicate key %s", line, k)
		}
		keys[k] = v
	}
	for k, want := range map[string]string{
		"Type": "Application", "Name": "tollgate", "Exec": "tollgate", "TryExec": "tollgate",
		"Icon": AppID, "Terminal": "false", "StartupWMClass": "tollgate",
	} {
		if keys[k] != want {
			t.Errorf("%s=%q, want %q", k, keys[k], want)
		}
	}
	if !strings.HasSuffix(keys["Categories"], ";") || !strings.HasSuffix(keys["Keywords"], ";") {
		t.Errorf("Categories and Keywords are lists ending in ';': %q %q", keys["Categories"], keys["Keywords"])
	}
}
