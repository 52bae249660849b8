package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tollgate/app/follow"
	"tollgate/app/home"
	"tollgate/app/importer"
	"tollgate/app/imports"
	"tollgate/pricing"
	"tollgate/storage/sqlite"
)

// Import is `tollgate import [--home DIR] [--harness H] [--watch] PATH…`.
func Import(ctx context.Context, args []string, stdio IO) error {
	fset, common := newFlags("import", stdio, false)
	harness := harnessFlag(fset, "the logs", true)
	watch := fset.Bool("watch", false, "keep running and import what the harnesses append, so the dashboard stays live")
	interval := fset.Duration("interval", 0, "no longer used: --watch notices new lines as they are written (kept so scripts keep working)")
	fset.Usage = func() {
		fmt.Fprint(stdio.Stderr, `usage: tollgate import [--home DIR] [--harness `+strings.Join(importer.Harnesses(), "|")+`] [--watch] [PATH…]

Imports agent session logs: files or folders (no PATH: the harnesses' own
folders — Claude Code's ~/.claude/projects or $CLAUDE_CONFIG_DIR/projects,
Codex's ~/.codex/sessions or $CODEX_HOME/sessions, dsh's
~/.local/share/dsh/sessions or $DSH_HOME/sessions, Gemini CLI's
~/.gemini/tmp or $GEMINI_CLI_HOME/.gemini/tmp, OpenCode's database
~/.local/share/opencode/opencode.db or $XDG_DATA_HOME/opencode/opencode.db,
read-only). Importing again adds only
what the logs gained since. Works whether or not a tollgate is running.

`)
		fset.PrintDefaults()
	}
	if err := parse(fset, args); err != nil {
		return err
	}
	if *harness != "" && !imports.ValidHarness(*harness) {
		return usagef("tollgate import: --harness %q: want one of %s", *harness, strings.Join(importer.Harnesses(), ", "))
	}
	dir, err := resolveHome(common)
	if err != nil {
		return err
	}
	settings, err := loadSettings(dir)
	if err != nil {
		return err
	}
	db, err := sqlite.Open(ctx, home.DBPath(dir))
	if err != nil {
		return err
	}
	defer db.Close()

	sources := imports.Sources(fset.Args(), *harness)
	bar := newProgressBar(stdio.Stderr)
	res, importErr := imports.Files(ctx, db, settings, sources, bar.update)
	bar.done()
	printImportResult(stdio, res, importErr)
	if !*watch {
		if importErr != nil {
			return errFailed // the files that failed are listed above
		}
		return nil
	}
	if *interval != 0 {
		fmt.Fprintln(stdio.Stderr, "tollgate import: --interval is no longer needed: new lines are noticed as they are written")
	}
	fmt.Fprintf(stdio.Stderr, "watching %s for new lines (Ctrl-C stops)\n", describeSources(sources))
	// The same follower as the window's and serve's (app/follow): inotify,
	// not polling; what the folders gain is imported as it is written.
	roots := make([]imports.Root, 0, len(sources))
	for _, src := range sources {
		dir, err := filepath.Abs(src.Path)
		if err != nil {
			return fmt.Errorf("tollgate import: %s: %w", src.Path, err)
		}
		roots = append(roots, imports.Root{Harness: src.Harness, Dir: dir})
	}
	log := slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f, err := follow.Start(ctx, follow.Options{DB: db, Settings: settings, Roots: roots, Log: log, Publish: func(event string, data any) {
		if im, ok := data.(follow.Imported); ok && event == follow.EventImported {
			printFollowed(stdio, im)
		}
	}})
	if err != nil {
		return fmt.Errorf("tollgate import: %w", err)
	}
	<-ctx.Done()
	f.Close()
	if importErr != nil {
		return errFailed
	}
	return nil
}

func describeSources(srcs []imports.Source) string {
	var names []string
	for _, s := range srcs {
		names = append(names, s.Path)
	}
	return strings.Join(names, ", ")
}

func printImportResult(stdio IO, res imports.Result, err error) {
	unchanged := 0
	for _, f := range res.Files {
		switch {
		case f.Err != nil:
		case f.Unchanged:
			unchanged++
		}
	}
	fmt.Fprintf(stdio.Stdout, "imported %d files (%s): %d requests, %d updated, %d folds in %d sessions",
		len(res.Files)-res.Failed-unchanged, pricing.FormatBytes(res.Bytes), res.Requests, res.Updated, res.Folds, len(res.Sessions))
	if unchanged > 0 {
		fmt.Fprintf(stdio.Stdout, "; %d unchanged", unchanged)
	}
	fmt.Fprintln(stdio.Stdout)
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "tollgate import: %d files failed (nothing of them was stored):\n", res.Failed)
		for _, f := range res.Files {
			if f.Err != nil {
				fmt.Fprintln(stdio.Stderr, " ", f.Err)
			}
		}
		if res.Failed == 0 {
			fmt.Fprintln(stdio.Stderr, " ", err)
		}
	}
}

// printFollowed is one line per import the follower made (a file that
// failed is logged by the follower, naming file and line).
func printFollowed(stdio IO, im follow.Imported) {
	fmt.Fprintf(stdio.Stdout, "%s %s +%d requests, %d updated, +%d folds\n", time.Now().Format("15:04:05"),
		strings.Join(im.Sessions, ", "), im.Requests, im.Updated, im.Folds)
}

// progressBar draws a large import's progress on stderr: a redrawn bar on
// a terminal, else (a pipe, a log file) a plain line at every further
// tenth of the bytes.
type progressBar struct {
	w     io.Writer
	tty   bool
	drawn bool
	tenth int
	start time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	b := &progressBar{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

// barMinBytes: smaller imports finish before progress would help.
const barMinBytes = 16 << 20

func (b *progressBar) update(p imports.Progress) {
	if p.BytesTotal < barMinBytes && time.Since(b.start) < time.Second {
		return
	}
	if b.tty {
		b.drawn = true
		fmt.Fprint(b.w, "\r\x1b[K"+renderBar(p, 30))
		return
	}
	if p.BytesTotal <= 0 {
		return
	}
	if t := int(10 * min(p.BytesDone, p.BytesTotal) / p.BytesTotal); t > b.tenth && t < 10 {
		b.tenth = t
		fmt.Fprintf(b.w, "importing: %d%% of %s, %d/%d files, %d requests, %d folds\n",
			10*t, pricing.FormatBytes(p.BytesTotal), p.FilesDone, p.FilesTotal, p.Requests, p.Folds)
	}
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}

func renderBar(p imports.Progress, width int) string {
	frac := 0.0
	if p.BytesTotal > 0 {
		frac = min(float64(p.BytesDone)/float64(p.BytesTotal), 1)
	} else if p.FilesTotal > 0 {
		frac = float64(p.FilesDone) / float64(p.FilesTotal)
	}
	fill := int(frac * float64(width))
	bar := strings.Repeat("=", fill)
	if fill < width {
		bar += ">" + strings.Repeat(" ", width-fill-1)
	}
	return fmt.Sprintf("[%s] %3.0f%% %s/%s · %d/%d files · %d requests · %d folds",
		bar, frac*100, pricing.FormatBytes(p.BytesDone), pricing.FormatBytes(p.BytesTotal), p.FilesDone, p.FilesTotal, p.Requests, p.Folds)
}
