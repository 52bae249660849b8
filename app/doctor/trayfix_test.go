package doctor

import "testing"

// The tray fix names the desktop's own way to a tray host, and never
// another desktop's package.
func TestTrayFixPerDesktop(t *testing.T) {
	for desktop, want := range map[string]string{
		"":             "sudo apt-get install gnome-shell-extension-appindicator && gnome-extensions enable ubuntu-appindicators@ubuntu.com",
		"ubuntu:GNOME": "sudo apt-get install gnome-shell-extension-appindicator && gnome-extensions enable ubuntu-appindicators@ubuntu.com",
		"XFCE":         "sudo apt-get install xfce4-statusnotifier-plugin   # then add it to a panel",
		"KDE":          "# KDE has a tray host built in: log in to a desktop session and run doctor there",
		"MATE":         "# MATE: add a tray (StatusNotifierItem) host to its panel, then run doctor again",
		"X-Cinnamon":   "# X-Cinnamon: add a tray (StatusNotifierItem) host to its panel, then run doctor again",
	} {
		if got := trayFix(desktop, "sudo "); got != want {
			t.Errorf("%q: %q, want %q", desktop, got, want)
		}
	}
}
