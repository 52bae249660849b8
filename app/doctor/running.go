package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"tollgate/app/harness"
	"tollgate/app/home"
)

// The checks of the running tollgate: its API and the guard.

func (d *doctor) checkAPI(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "api", Title: "API", Needed: true, Status: DoctorError}
	path := home.APIFilePath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Detail = "tollgate is not running on " + d.home + " (no api.json): harnesses proceed unguarded"
		c.Fix = d.startCommand()
		return c
	}
	info, err := home.ReadAPIInfo(d.home)
	if err != nil {
		c.Detail = err.Error()
		c.Fix = "rm " + home.ShellQuote(path) + " && " + d.startCommand()
		return c
	}
	c.Facts = map[string]any{"url": info.URL, "pid": info.PID, "version": info.Version}
	if !home.ProcessAlive(info.PID) {
		c.Detail = fmt.Sprintf("%s is stale: it names pid %d, which has exited (tollgate did not exit cleanly); harnesses find no tollgate", path, info.PID)
		c.Fix = "rm " + home.ShellQuote(path) + " && " + d.startCommand()
		return c
	}
	restart := fmt.Sprintf("kill %d && sleep 1 && %s", info.PID, d.startCommand())
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the API token", path, perm)
		c.Fix = "chmod 600 " + home.ShellQuote(path)
		return c
	}
	h, err := d.getHealth(ctx, info)
	if err != nil {
		c.Detail = fmt.Sprintf("pid %d is alive but %s/v1/health does not answer: %v", info.PID, info.URL, err)
		c.Fix = restart
		return c
	}
	d.health, d.live = &h, true
	if b, err := os.ReadFile(home.TokenPath(d.home)); err == nil && strings.TrimSpace(string(b)) != info.Token {
		c.Detail = fmt.Sprintf("%s names a token other than %s: harnesses that read one of them get 401", path, home.TokenPath(d.home))
		c.Fix = restart
		return c
	}
	c.Facts["mode"], c.Facts["armed"], c.Facts["engines"] = h.Mode, h.Armed, h.Engines
	c.Status = DoctorOK
	c.Detail = fmt.Sprintf("tollgate %s (pid %d) answers at %s; mode %s", h.Version, info.PID, info.URL, h.Mode)
	if d.version != "" && h.Version != d.version {
		c.Status = DoctorWarn
		c.Detail += fmt.Sprintf("; it runs version %s, this binary is %s: restart it to run this one", h.Version, d.version)
		c.Fix = restart
	}
	return c
}

func (d *doctor) getHealth(ctx context.Context, info home.APIInfo) (doctorHealth, error) {
	var h doctorHealth
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, strings.TrimRight(info.URL, "/")+"/v1/health", nil)
	if err != nil {
		return h, err
	}
	req.Header.Set("Authorization", "Bearer "+info.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return h, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		return h, errors.New("401: it does not accept the token api.json names")
	case res.StatusCode != http.StatusOK:
		return h, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Status != "ok" {
		return h, fmt.Errorf("unexpected answer %.80q", body)
	}
	return h, nil
}

func (d *doctor) checkGuard(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "guard", Title: "Guard", Status: DoctorInfo}
	if !d.live {
		c.Detail = "unknown: tollgate is not answering (see API)"
		return c
	}
	c.Facts = map[string]any{"armed": d.health.Armed, "engines": d.health.Engines, "mode": d.health.Mode}
	if d.health.Armed {
		c.Status = DoctorOK
		parts := []string{"armed: Cache: " + d.health.Mode, fmt.Sprintf("%d %s connected", d.health.Engines, plural(d.health.Engines, "engine", "engines"))}
		for _, in := range harness.Integrations(d.home) {
			if in.Installed && in.Verified {
				parts = append(parts, in.Name+" hook installed")
			}
		}
		c.Detail = strings.Join(parts, " · ")
		return c
	}
	c.Status = DoctorWarn
	c.Detail = "not armed: no harness engine holds a lease and no hook integration is installed, so no rewrite is guarded (below: how to set one up)"
	c.Fix = d.setupFix()
	return c
}
