package desktop

import (
	"bytes"
	"image/png"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

type fakeTrayBackend struct {
	mu    sync.Mutex
	views []trayView
}

func (f *fakeTrayBackend) Show(v trayView) {
	f.mu.Lock()
	f.views = append(f.views, v)
	f.mu.Unlock()
}

func (f *fakeTrayBackend) last(t *testing.T) trayView {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.views) == 0 {
		t.Fatal("the tray was never drawn")
	}
	return f.views[len(f.views)-1]
}

func (f *fakeTrayBackend) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.views)
}

func TestTrayStateWords(t *testing.T) {
	for _, c := range []struct {
		s             TrayState
		label, tooltp string
	}{
		{TrayState{Mode: "ask", Armed: true}, "Cache: ask", "tollgate — Cache: ask"},
		{TrayState{Mode: "auto", Armed: true, Pending: 1}, "Cache: auto", "tollgate — Cache: auto · 1 question waiting"},
		{TrayState{Mode: "off", Armed: true, Pending: 3}, "Cache: off", "tollgate — Cache: off · 3 questions waiting"},
		{TrayState{Mode: "ask", Armed: false}, "Cache: not armed", "tollgate — Cache: not armed"},
	} {
		if got := c.s.Label(); got != c.label {
			t.Errorf("%+v label %q, want %q", c.s, got, c.label)
		}
		if got := c.s.Tooltip(); got != c.tooltp {
			t.Errorf("%+v tooltip %q, want %q", c.s, got, c.tooltp)
		}
	}
}

func TestTrayFollowsStateAndPendingQuestions(t *testing.T) {
	b := &fakeTrayBackend{}
	tr := newTray(b)
	tr.Update(TrayState{Mode: "ask", Armed: true})
	v := b.last(t)
	if v.Status != "Cache: ask" || v.Checked != "ask" || v.OpenTitle != "Open tollgate" || v.Tooltip != "tollgate — Cache: ask" {
		t.Fatalf("view %+v", v)
	}
	calm := v.Icon

	tr.Update(TrayState{Mode: "ask", Armed: true}) // unchanged: no redraw
	if b.count() != 1 {
		t.Fatalf("redrew an unchanged state: %d draws", b.count())
	}

	tr.Update(TrayState{Mode: "ask", Armed: true, Pending: 2})
	v = b.last(t)
	if v.OpenTitle != "Answer 2 waiting questions" || v.Tooltip != "tollgate — Cache: ask · 2 questions waiting" {
		t.Fatalf("view %+v", v)
	}
	if bytes.Equal(v.Icon, calm) {
		t.Fatal("the icon does not show that questions wait")
	}
	badged := v.Icon
	tr.Update(TrayState{Mode: "ask", Armed: true, Pending: 1})
	if v = b.last(t); !bytes.Equal(v.Icon, badged) || v.OpenTitle != "Answer 1 waiting question" {
		t.Fatalf("one or two questions: the same badge, got %+v", v.OpenTitle)
	}

	tr.Update(TrayState{Mode: "auto", Armed: true})
	if v = b.last(t); v.Checked != "auto" || bytes.Equal(v.Icon, calm) {
		t.Fatalf("auto: %+v", v.Checked)
	}
	tr.Update(TrayState{Mode: "auto", Armed: false})
	if v = b.last(t); v.Status != "Cache: not armed" {
		t.Fatalf("not armed: %+v", v.Status)
	}
}

func TestTrayIconsAreDistinctPNGs(t *testing.T) {
	seen := map[string]TrayState{}
	for _, s := range []TrayState{
		{Mode: "ask", Armed: true}, {Mode: "auto", Armed: true}, {Mode: "off", Armed: true}, {Mode: "ask", Armed: false},
		{Mode: "ask", Armed: true, Pending: 1}, {Mode: "auto", Armed: false, Pending: 1},
	} {
		b := trayIcon(s)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if r := img.Bounds(); r.Dx() != iconSize || r.Dy() != iconSize {
			t.Fatalf("%+v: %v", s, r)
		}
		// Transparent corners, an opaque centre (or ring) — a drawn icon, not a blank square.
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Fatalf("%+v: corner not transparent", s)
		}
		if prev, dup := seen[string(b)]; dup {
			t.Fatalf("%+v draws the same icon as %+v", s, prev)
		}
		seen[string(b)] = s
	}
}

// fakeWatcher is a tray host: it accepts StatusNotifierItem registrations.
type fakeWatcher struct{ registered chan string }

func (f *fakeWatcher) RegisterStatusNotifierItem(sender dbus.Sender, path string) *dbus.Error {
	f.registered <- string(sender) + path
	return nil
}

// The real fyne.io/systray item, on a private session bus with a fake tray
// host: it registers, shows the state's tooltip, and its menu switches the
// mode and opens the window. (systray keeps package state: one per process.)
func TestSystrayOnAPrivateBus(t *testing.T) {
	addr := privateBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)

	if ok, err := trayHostPresent(); ok || err != nil {
		t.Fatalf("no watcher yet: present=%v err=%v", ok, err)
	}
	host := connectBus(t, addr)
	w := &fakeWatcher{registered: make(chan string, 4)}
	if err := host.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	if _, err := host.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue); err != nil {
		t.Fatal(err)
	}
	if ok, err := trayHostPresent(); !ok || err != nil {
		t.Fatalf("watcher present: %v %v", ok, err)
	}

	modes := make(chan string, 4)
	opened := make(chan struct{}, 4)
	backend, stop := startSystray(trayActions{
		Open:    func() { opened <- struct{}{} },
		SetMode: func(m string) { modes <- m },
		Quit:    func() {},
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer stop()
	newTray(backend).Update(TrayState{Mode: "ask", Armed: true, Pending: 2})

	var item string
	select {
	case item = <-w.registered:
	case <-time.After(10 * time.Second):
		t.Fatal("the tray item never registered with the host")
	}
	sender := strings.TrimSuffix(item, "/StatusNotifierItem")
	obj := host.Object(sender, "/StatusNotifierItem")

	var tip struct {
		V0 string
		V1 []struct {
			W, H int32
			Pix  []byte
		}
		V2, V3 string
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		v, err := obj.GetProperty("org.kde.StatusNotifierItem.ToolTip")
		if err == nil {
			if err := v.Store(&tip); err != nil {
				t.Fatal(err)
			}
			if tip.V2 != "" {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if tip.V2 != "tollgate — Cache: ask · 2 questions waiting" {
		t.Fatalf("tooltip %q", tip.V2)
	}
	icon, err := obj.GetProperty("org.kde.StatusNotifierItem.IconPixmap")
	if err != nil || !strings.Contains(icon.Signature().String(), "ay") {
		t.Fatalf("icon %v %v", icon, err)
	}

	// The menu's items, addressed as a tray host does. (GetLayout is not
	// called: fyne.io/systray v1.12.2 races on its menu version there.)
	menu := host.Object(sender, "/StatusNotifierItem/menu")
	var ids map[string]int32
	for time.Now().Before(deadline) {
		if ids = backend.itemIDs(); len(ids) == 6 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var props []struct {
		V0 int32
		V1 map[string]dbus.Variant
	}
	if err := menu.Call("com.canonical.dbusmenu.GetGroupProperties", 0, []int32{ids["open"], ids["ask"], ids["auto"], ids["status"]}, []string{}).Store(&props); err != nil {
		t.Fatal(err)
	}
	labels := map[int32]string{}
	checked := map[int32]bool{}
	for _, p := range props {
		labels[p.V0], _ = p.V1["label"].Value().(string)
		state, _ := p.V1["toggle-state"].Value().(int32)
		checked[p.V0] = state == 1
	}
	if labels[ids["open"]] != "Answer 2 waiting questions" || labels[ids["status"]] != "Cache: ask" {
		t.Fatalf("labels %v", labels)
	}
	if !checked[ids["ask"]] || checked[ids["auto"]] {
		t.Fatalf("checks %v (ids %v)", checked, ids)
	}
	click := func(role string) {
		if err := menu.Call("com.canonical.dbusmenu.Event", 0, ids[role], "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
			t.Fatal(err)
		}
	}
	click("auto")
	select {
	case m := <-modes:
		if m != "auto" {
			t.Fatalf("switched to %q", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the mode item did nothing")
	}
	click("open")
	select {
	case <-opened:
	case <-time.After(5 * time.Second):
		t.Fatal("the open item did nothing")
	}
}
