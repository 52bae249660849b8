package doctor

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tollgate/app/config"
	"tollgate/app/home"
	"tollgate/pricing"
	"tollgate/storage/sqlite"
)

// The checks of the home: config.yaml, the token, the database.

func (d *doctor) checkConfig(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "config", Title: "Configuration", Needed: true, Status: DoctorOK}
	file := filepath.Join(d.home, "config.yaml")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		c.Detail = file + " does not exist yet: the defaults apply (written with comments on first start)"
		return c
	}
	cfg, err := config.LoadConfig(d.home, config.Flags{})
	if err != nil {
		c.Status = DoctorError
		c.Detail = err.Error()
		c.Fix = "${EDITOR:-nano} " + home.ShellQuote(file) + "   # or start over with the defaults: mv " + home.ShellQuote(file) + " " + home.ShellQuote(file+".bak")
		var ce *config.ConfigError
		if errors.As(err, &ce) {
			env := "TOLLGATE_" + strings.ToUpper(ce.Key)
			if os.Getenv(env) != "" {
				c.Detail += " (from $" + env + ", which overrides the file)"
				c.Fix = "unset " + env
			}
		}
		return c
	}
	c.Detail = fmt.Sprintf("%s: mode %s, listen %s, %d %s", file, cfg.Mode, cfg.Listen, len(cfg.Profiles), plural(len(cfg.Profiles), "profile", "profiles"))
	c.Facts = map[string]any{"file": file, "mode": cfg.Mode, "listen": cfg.Listen, "profiles": len(cfg.Profiles)}
	return c
}

func (d *doctor) checkToken(context.Context) DoctorCheck {
	c := DoctorCheck{ID: "token", Title: "Token file", Needed: true, Status: DoctorOK}
	path := home.TokenPath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Status = DoctorInfo
		c.Detail = path + " does not exist yet: it is created on first start"
		c.Fix = d.cmd + " token" + d.homeArg
		return c
	}
	if err != nil {
		return unreadable(c, path, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the API token", path, perm)
		c.Fix = "chmod 600 " + home.ShellQuote(path)
		return c
	}
	b, err := os.ReadFile(path)
	tok := strings.TrimSpace(string(b))
	if _, herr := hex.DecodeString(tok); err != nil || herr != nil || len(tok) != 64 {
		c.Status = DoctorError
		c.Detail = path + " is not 64 hex characters"
		if err != nil {
			c.Detail = err.Error()
		}
		c.Fix = d.cmd + " token --rotate" + d.homeArg
		return c
	}
	// The owner token answers questions and changes settings: it must be
	// private too.
	owner := home.OwnerTokenPath(d.home)
	if fi, err := os.Stat(owner); err == nil && fi.Mode().Perm()&0o077 != 0 {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s is mode %04o, want 0600: other users can read the owner token", owner, fi.Mode().Perm())
		c.Fix = "chmod 600 " + home.ShellQuote(owner)
		return c
	}
	c.Detail = path + " is private (0600)"
	return c
}

func (d *doctor) checkDatabase(ctx context.Context) DoctorCheck {
	c := DoctorCheck{ID: "database", Title: "Database", Needed: true, Status: DoctorOK}
	path := home.DBPath(d.home)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		c.Detail = path + " does not exist yet: it is created on first start"
		return c
	}
	if err != nil {
		return unreadable(c, path, err)
	}
	size := fi.Size()
	var wal int64
	if wfi, err := os.Stat(path + "-wal"); err == nil {
		wal = wfi.Size()
	}
	c.Facts = map[string]any{"path": path, "sizeBytes": size, "walBytes": wal}

	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	version, err := d.inspectDB(cctx, path)
	if err != nil {
		c.Status = DoctorError
		c.Detail = fmt.Sprintf("%s: %v", path, err)
		// Keep the damaged file for recovery (sqlite3 .recover); the next
		// start creates an empty database.
		stop := ""
		if info, err := home.ReadAPIInfo(d.home); err == nil && home.ProcessAlive(info.PID) {
			stop = fmt.Sprintf("kill %d; ", info.PID)
		}
		c.Fix = stop + "mv " + home.ShellQuote(path) + " " + home.ShellQuote(path+".damaged") + " && " + d.startCommand()
		return c
	}
	c.Facts["schemaVersion"] = version
	c.Detail = fmt.Sprintf("%s: integrity ok, schema version %d, %s", path, version, pricing.FormatBytes(size))
	if wal > 0 {
		c.Detail += " (+ " + pricing.FormatBytes(wal) + " write-ahead log)"
	}
	return c
}

// inspectDB checks integrity and reads the schema version, on the service's
// handle when there is one, else read-only (doctor never migrates or writes
// a database).
func (d *doctor) inspectDB(ctx context.Context, path string) (int, error) {
	if d.opts.DB != nil {
		if err := d.opts.DB.IntegrityCheck(ctx); err != nil {
			return 0, err
		}
		return d.opts.DB.SchemaVersion(ctx)
	}
	return sqlite.Inspect(ctx, path)
}

// unreadable is c failed on a file it cannot stat: the error, and a look
// at the file as the fix.
func unreadable(c DoctorCheck, path string, err error) DoctorCheck {
	c.Status = DoctorError
	c.Detail = err.Error()
	c.Fix = "ls -l " + home.ShellQuote(path)
	return c
}
