package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"tollgate/app/install"
	"tollgate/build/desktop"
)

// The check of the autostart entry.

func (d *doctor) checkAutostart() DoctorCheck {
	c := DoctorCheck{ID: "autostart", Title: "Autostart", Needed: true}
	fix := d.cmd + " install --user --autostart"
	if d.homeArg != "" {
		fix += d.homeArg
	}
	var candidates []string
	if p, err := install.UserAutostartPath(os.Getenv); err == nil {
		candidates = append(candidates, p)
	}
	dirs := os.Getenv("XDG_CONFIG_DIRS")
	if dirs == "" {
		dirs = "/etc/xdg"
	}
	for _, dir := range filepath.SplitList(dirs) {
		if filepath.IsAbs(dir) {
			candidates = append(candidates, filepath.Join(dir, "autostart", desktop.AppID+".desktop"))
		}
	}
	for _, path := range candidates {
		keys, err := install.ReadDesktopEntry(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		c.Facts = map[string]any{"file": path}
		if err != nil {
			c.Status, c.Detail, c.Fix = DoctorError, err.Error(), fix+" --force"
			return c
		}
		if strings.EqualFold(keys["Hidden"], "true") || strings.EqualFold(keys["X-GNOME-Autostart-enabled"], "false") {
			c.Status = DoctorWarn
			c.Detail = path + " is disabled (Hidden=true or X-GNOME-Autostart-enabled=false): tollgate does not start at login"
			c.Fix = fix + " --force"
			return c
		}
		args := install.DesktopExecFields(keys["Exec"])
		if len(args) == 0 {
			c.Status, c.Detail, c.Fix = DoctorError, path+": no Exec line", fix+" --force"
			return c
		}
		bin, err := exec.LookPath(args[0])
		if err != nil {
			c.Status = DoctorError
			c.Detail = fmt.Sprintf("%s starts %s, which does not exist: tollgate does not start at login", path, args[0])
			c.Fix = fix
			return c
		}
		c.Facts["exec"] = keys["Exec"]
		c.Status = DoctorOK
		c.Detail = fmt.Sprintf("%s starts `%s` at login", path, strings.Join(append([]string{bin}, args[1:]...), " "))
		return c
	}
	c.Status = DoctorWarn
	c.Detail = "no autostart entry: tollgate does not start with your session, so a harness that compacts before you open it runs unguarded"
	c.Fix = fix
	return c
}
