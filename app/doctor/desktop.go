package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/godbus/dbus/v5"

	"tollgate/app/desktop/sessionbus"
)

// The checks of the desktop session: the display, the tray host, the
// notification daemon.

func (d *doctor) checkDisplay(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "display", Title: "Display", Status: DoctorOK}
	x, wl := os.Getenv("DISPLAY"), os.Getenv("WAYLAND_DISPLAY")
	var found, missing []string
	if wl != "" {
		sock := wl
		if !filepath.IsAbs(sock) {
			sock = filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), wl)
		}
		if fileExists(sock) {
			found = append(found, "Wayland "+wl)
		} else {
			missing = append(missing, fmt.Sprintf("WAYLAND_DISPLAY=%s but %s does not exist", wl, sock))
		}
	}
	if x != "" {
		if sock, ok := x11Socket(x); !ok || fileExists(sock) {
			found = append(found, "X11 "+x)
		} else {
			missing = append(missing, fmt.Sprintf("DISPLAY=%s but %s does not exist", x, sock))
		}
	}
	if len(found) > 0 {
		c.Detail = strings.Join(found, ", ")
		return c
	}
	c.Status = DoctorWarn
	if len(missing) > 0 {
		c.Detail = strings.Join(missing, "; ") + ": no display server there. "
	} else {
		c.Detail = "no $DISPLAY or $WAYLAND_DISPLAY: "
	}
	c.Detail += "the window cannot open; the browser UI works without one"
	c.Fix = d.cmd + " serve" + d.homeArg
	return c
}

// x11Socket is the local socket of an X display (":0", ":0.0", "unix:1");
// ok is false for a remote display, which cannot be checked from here.
func x11Socket(display string) (string, bool) {
	host, num, ok := strings.Cut(display, ":")
	if !ok || (host != "" && host != "unix") {
		return "", false
	}
	num, _, _ = strings.Cut(num, ".")
	if _, err := strconv.Atoi(num); err != nil {
		return "", false
	}
	return "/tmp/.X11-unix/X" + num, true
}

// busName reports whether name has an owner on the session bus (or, with
// activatable, could be started by it).
func (d *doctor) busName(ctx context.Context, name string, activatable bool) (bool, error) {
	conn, err := sessionbus.Connect(dbus.WithContext(ctx))
	if err != nil {
		return false, err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	var has bool
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
		return false, fmt.Errorf("asking the session D-Bus: %w", err)
	}
	if has || !activatable {
		return has, nil
	}
	var names []string
	if err := conn.BusObject().CallWithContext(cctx, "org.freedesktop.DBus.ListActivatableNames", 0).Store(&names); err != nil {
		return false, nil
	}
	for _, n := range names {
		if n == name {
			return true, nil
		}
	}
	return false, nil
}

// busService checks that a service tollgate's desktop side uses is on the
// session bus (activatable: started on demand counts): ok says what that
// gives; without it the check warns, saying what is missing (what) and
// what follows (without), and the caller adds the fix.
func (d *doctor) busService(ctx context.Context, c DoctorCheck, name string, activatable bool, ok, what, without string) (DoctorCheck, bool) {
	found, err := d.busName(ctx, name, activatable)
	if found {
		c.Status, c.Detail = DoctorOK, name+ok
		return c, true
	}
	c.Status = DoctorWarn
	why := what + " (" + name + ") on the session bus"
	if err != nil {
		why = err.Error()
	}
	c.Detail = why + without
	return c, false
}

func (d *doctor) checkTray(ctx context.Context) DoctorCheck {
	c, ok := d.busService(ctx, DoctorCheck{ID: "tray", Title: "Tray host"}, "org.kde.StatusNotifierWatcher", false,
		" runs on the session bus: the tray icon shows", "no tray host",
		": no tray icon; a hidden tollgate (--hidden) opens its window only when a question arrives or when started again")
	if ok {
		return c
	}
	c.Fix = trayFix(os.Getenv("XDG_CURRENT_DESKTOP"), d.sudo)
	return c
}

// trayFix is the fix for a missing tray host on desktop (XDG_CURRENT_DESKTOP):
// the package XFCE lacks, KDE's and LXQt's own, GNOME's extension (also for
// no desktop named: GNOME is Debian's default), and for any other desktop
// what to look for, never another desktop's package.
func trayFix(desktop, sudo string) string {
	desk := strings.ToUpper(desktop)
	switch {
	case strings.Contains(desk, "XFCE"):
		return sudo + "apt-get install xfce4-statusnotifier-plugin   # then add it to a panel"
	case strings.Contains(desk, "KDE"), strings.Contains(desk, "LXQT"):
		return "# " + desk + " has a tray host built in: log in to a desktop session and run doctor there"
	case desk == "", strings.Contains(desk, "GNOME"):
		return sudo + "apt-get install gnome-shell-extension-appindicator && gnome-extensions enable ubuntu-appindicators@ubuntu.com"
	}
	return "# " + desktop + ": add a tray (StatusNotifierItem) host to its panel, then run doctor again"
}

func (d *doctor) checkNotifications(ctx context.Context) DoctorCheck {
	c, ok := d.busService(ctx, DoctorCheck{ID: "notifications", Title: "Notifications"}, "org.freedesktop.Notifications", true,
		" is available: a question raises a desktop notification", "no notification service",
		": questions still open the window, without a desktop notification")
	if !ok {
		c.Fix = d.sudo + "apt-get install notification-daemon"
	}
	return c
}
