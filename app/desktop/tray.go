package desktop

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log/slog"
	"math"
	"sync"

	"tollgate/app/desktop/sessionbus"

	"fyne.io/systray"
)

// TrayState is what the tray icon shows: the pill's state for the global
// scope and how many questions wait for an answer.
type TrayState struct {
	Mode    string // ask | auto | off
	Armed   bool   // a live engine or an installed hook backs the mode
	Pending int    // questions waiting
}

// Label is the pill's label (ARCHITECTURE.md, "Modes and decisions"): no promise of protection nobody backs.
func (s TrayState) Label() string {
	if !s.Armed {
		return "Cache: not armed"
	}
	return "Cache: " + s.Mode
}

// Tooltip is the icon's tooltip: the label, and the questions waiting.
func (s TrayState) Tooltip() string {
	t := "tollgate — " + s.Label()
	switch {
	case s.Pending == 1:
		t += " · 1 question waiting"
	case s.Pending > 1:
		t += fmt.Sprintf(" · %d questions waiting", s.Pending)
	}
	return t
}

// trayView is everything the tray shows for one state.
type trayView struct {
	Icon      []byte
	Tooltip   string
	Status    string // the menu's first, disabled line
	OpenTitle string
	Checked   string // the global mode that carries the check
}

// trayBackend draws a trayView; systrayBackend is the real one, tests fake it.
type trayBackend interface {
	Show(v trayView)
}

// trayActions are what the tray's menu items do.
type trayActions struct {
	Open    func()
	SetMode func(mode string)
	Quit    func()
}

// Tray keeps the tray icon in step with the guard.
type Tray struct {
	backend trayBackend
	mu      sync.Mutex
	last    *TrayState
	icons   map[TrayState]([]byte)
}

func newTray(b trayBackend) *Tray {
	return &Tray{backend: b, icons: map[TrayState][]byte{}}
}

// Update redraws the tray when the state changed.
func (t *Tray) Update(s TrayState) {
	t.mu.Lock()
	if t.last != nil && *t.last == s {
		t.mu.Unlock()
		return
	}
	t.last = &s
	key := TrayState{Mode: s.Mode, Armed: s.Armed, Pending: min(s.Pending, 1)} // the icon only shows whether any wait
	icon, ok := t.icons[key]
	if !ok {
		icon = trayIcon(key)
		t.icons[key] = icon
	}
	t.mu.Unlock()
	open := "Open tollgate"
	switch {
	case s.Pending == 1:
		open = "Answer 1 waiting question"
	case s.Pending > 1:
		open = fmt.Sprintf("Answer %d waiting questions", s.Pending)
	}
	t.backend.Show(trayView{Icon: icon, Tooltip: s.Tooltip(), Status: s.Label(), OpenTitle: open, Checked: s.Mode})
}

// ---- icons -----------------------------------------------------------------

var (
	iconAsk      = color.NRGBA{0x24, 0x58, 0xd6, 0xff}
	iconAuto     = color.NRGBA{0x1d, 0x7a, 0x46, 0xff}
	iconOff      = color.NRGBA{0x8a, 0x93, 0xa5, 0xff}
	iconNotArmed = color.NRGBA{0xd9, 0x8a, 0x00, 0xff}
	iconBadge    = color.NRGBA{0xd3, 0x2f, 0x2f, 0xff}
	iconWhite    = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

const iconSize = 64

// trayIcon draws the state as a 64×64 PNG: a disc in the mode's colour with
// a white mark (ask: a dot, "held"; auto: a check; off: a bar), a hollow
// amber ring when nothing is armed, and a red badge while questions wait.
// Drawn in code so no binary asset can drift from the states.
func trayIcon(s TrayState) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	c := float64(iconSize) / 2
	r := c - 3
	switch {
	case !s.Armed:
		paint(img, iconNotArmed, func(x, y float64) bool { d := math.Hypot(x-c, y-c); return d <= r && d >= r-9 })
	default:
		fill := iconAsk
		switch s.Mode {
		case "auto":
			fill = iconAuto
		case "off":
			fill = iconOff
		}
		paint(img, fill, func(x, y float64) bool { return math.Hypot(x-c, y-c) <= r })
		switch s.Mode {
		case "auto":
			paint(img, iconWhite, func(x, y float64) bool {
				return segDist(x, y, 19, 33, 28, 42) <= 4.5 || segDist(x, y, 28, 42, 45, 22) <= 4.5
			})
		case "off":
			paint(img, iconWhite, func(x, y float64) bool { return segDist(x, y, 19, 32, 45, 32) <= 4.5 })
		default:
			paint(img, iconWhite, func(x, y float64) bool { return math.Hypot(x-c, y-c) <= 9 })
		}
	}
	if s.Pending > 0 {
		bx, by, br := 50.0, 14.0, 12.0
		paint(img, iconWhite, func(x, y float64) bool { return math.Hypot(x-bx, y-by) <= br+2.5 })
		paint(img, iconBadge, func(x, y float64) bool { return math.Hypot(x-bx, y-by) <= br })
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic("encoding a generated PNG: " + err.Error()) // in-memory: cannot fail
	}
	return buf.Bytes()
}

// paint blends col over img where inside holds, 4×4 supersampled so the
// edges are smooth at tray sizes.
func paint(img *image.NRGBA, col color.NRGBA, inside func(x, y float64) bool) {
	const ss = 4
	for py := 0; py < iconSize; py++ {
		for px := 0; px < iconSize; px++ {
			hits := 0
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					if inside(float64(px)+(float64(sx)+0.5)/ss, float64(py)+(float64(sy)+0.5)/ss) {
						hits++
					}
				}
			}
			if hits == 0 {
				continue
			}
			a := float64(hits) / (ss * ss) * float64(col.A) / 255
			dst := img.NRGBAAt(px, py)
			da := float64(dst.A) / 255
			oa := a + da*(1-a)
			mix := func(s, d uint8) uint8 {
				if oa == 0 {
					return 0
				}
				return uint8(math.Round((float64(s)*a + float64(d)*da*(1-a)) / oa))
			}
			img.SetNRGBA(px, py, color.NRGBA{mix(col.R, dst.R), mix(col.G, dst.G), mix(col.B, dst.B), uint8(math.Round(oa * 255))})
		}
	}
}

// segDist is the distance from (x, y) to the segment (ax, ay)–(bx, by).
func segDist(x, y, ax, ay, bx, by float64) float64 {
	dx, dy := bx-ax, by-ay
	t := ((x-ax)*dx + (y-ay)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(x-(ax+t*dx), y-(ay+t*dy))
}

// ---- the StatusNotifierItem (fyne.io/systray) ---------------------------------

// trayHostPresent reports whether a tray host (a StatusNotifierWatcher)
// runs on the session bus. Without one, systray would export an item that
// nothing ever shows.
func trayHostPresent() (bool, error) {
	conn, err := sessionbus.Connect()
	if err != nil {
		return false, err
	}
	defer conn.Close()
	var has bool
	err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, "org.kde.StatusNotifierWatcher").Store(&has)
	return has, err
}

// systrayBackend draws trayViews with fyne.io/systray, whose D-Bus item
// runs beside the Wails main loop (RunWithExternalLoop): the full fyne app
// cannot share the main thread with Wails, the tray alone needs none.
type systrayBackend struct {
	actions trayActions

	mu      sync.Mutex
	ready   bool
	pending *trayView
	icon    []byte
	status  *systray.MenuItem
	open    *systray.MenuItem
	quit    *systray.MenuItem
	modes   map[string]*systray.MenuItem
}

// startSystray exports the tray item and returns it with the function that
// removes it. fyne.io/systray keeps its state in package variables, so
// there is one per process.
func startSystray(actions trayActions, log *slog.Logger) (*systrayBackend, func()) {
	b := &systrayBackend{actions: actions, modes: map[string]*systray.MenuItem{}}
	// A left click on the icon opens the window (the menu is on the right
	// button). Set before start: systray reads it while exporting the item,
	// concurrently with onReady.
	systray.SetOnTapped(actions.Open)
	start, end := systray.RunWithExternalLoop(b.onReady, nil)
	start()
	return b, func() {
		// systray's end closes a connection that is nil when start failed
		// half-way; a tray that never came up has nothing to remove.
		defer func() {
			if r := recover(); r != nil {
				log.Debug("tray: ending a tray that never started", "panic", r)
			}
		}()
		end()
	}
}

func (b *systrayBackend) onReady() {
	systray.SetTitle("tollgate")
	b.status = systray.AddMenuItem("tollgate", "")
	b.status.Disable()
	b.open = systray.AddMenuItem("Open tollgate", "Show the dashboard")
	systray.AddSeparator()
	for _, m := range []struct{ mode, title, tip string }{
		{"ask", "Ask before each rewrite", "Hold each context rewrite until you answer"},
		{"auto", "Allow rewrites automatically", "Price rewrites and let them run"},
		{"off", "Off: record only", "Harnesses compact as shipped"},
	} {
		b.modes[m.mode] = systray.AddMenuItemCheckbox(m.title, m.tip, false)
	}
	systray.AddSeparator()
	b.quit = systray.AddMenuItem("Quit tollgate", "Stop the guard and close the window")

	go forward(b.open.ClickedCh, b.actions.Open)
	go forward(b.quit.ClickedCh, b.actions.Quit)
	for mode, item := range b.modes {
		go forward(item.ClickedCh, func() { b.actions.SetMode(mode) })
	}

	b.mu.Lock()
	b.ready = true
	v := b.pending
	b.pending = nil
	b.mu.Unlock()
	if v != nil {
		b.Show(*v)
	}
}

// itemIDs are the D-Bus menu ids of the items by role, for a tray host
// (or a test) to address them; empty until the menu is built.
func (b *systrayBackend) itemIDs() map[string]int32 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int32{}
	if !b.ready {
		return out
	}
	items := map[string]*systray.MenuItem{"status": b.status, "open": b.open, "quit": b.quit}
	for mode, item := range b.modes {
		items[mode] = item
	}
	for role, item := range items {
		var id int32
		// MenuItem keeps its id unexported; String() is "MenuItem[<id>, …]".
		if _, err := fmt.Sscanf(item.String(), "MenuItem[%d,", &id); err == nil {
			out[role] = id
		}
	}
	return out
}

func forward(ch <-chan struct{}, f func()) {
	for range ch {
		f()
	}
}

func (b *systrayBackend) Show(v trayView) {
	b.mu.Lock()
	if !b.ready {
		b.pending = &v
		b.mu.Unlock()
		return
	}
	iconChanged := !bytes.Equal(b.icon, v.Icon)
	b.icon = v.Icon
	b.mu.Unlock()
	if iconChanged {
		systray.SetIcon(v.Icon)
	}
	systray.SetTooltip(v.Tooltip)
	b.status.SetTitle(v.Status)
	b.open.SetTitle(v.OpenTitle)
	for mode, item := range b.modes {
		if mode == v.Checked {
			item.Check()
		} else {
			item.Uncheck()
		}
	}
}
