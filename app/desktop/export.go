package desktop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"
)

// WebKitGTK inside Wails does not download what a link points at, so the
// window saves an export itself: the page asks with export.save {id, path,
// filename}, the window shows a save dialog, writes the answer of the
// trusted chain for path into the file chosen, and answers export.saved
// {id, file} (file "" when the user cancelled) or {id, error}.
const (
	eventExportSave  = "export.save"
	eventExportSaved = "export.saved"
)

// exportRequest is what the page sends.
type exportRequest struct {
	ID       string
	Path     string // an export route: /v1/export?format=csv, /v1/sessions/{id}/export?format=json
	Filename string
}

func parseExportRequest(data []any) (exportRequest, error) {
	if len(data) == 0 {
		return exportRequest{}, errors.New("export.save: no request")
	}
	m, ok := data[0].(map[string]any)
	if !ok {
		return exportRequest{}, errors.New("export.save: want an object")
	}
	var r exportRequest
	r.ID, _ = m["id"].(string)
	r.Path, _ = m["path"].(string)
	r.Filename, _ = m["filename"].(string)
	if !strings.HasPrefix(r.Path, "/v1/") || !strings.Contains(r.Path, "export") {
		return r, fmt.Errorf("export.save: %q is not an export route", r.Path)
	}
	r.Filename = filepath.Base(r.Filename)
	if r.Filename == "." || r.Filename == "/" || r.Filename == "" {
		r.Filename = "tollgate-export"
	}
	return r, nil
}

// saveExport serves one export.save: the dialog, then the file.
func (w *Window) saveExport(ctx context.Context, data []any) {
	req, err := parseExportRequest(data)
	answer := map[string]any{"id": req.ID}
	defer func() { w.emitter.Emit(eventExportSaved, answer) }()
	if err != nil {
		answer["error"] = err.Error()
		return
	}
	dir, _ := os.UserHomeDir()
	if d := filepath.Join(dir, "Downloads"); isDir(d) {
		dir = d
	}
	file, err := wruntime.SaveFileDialog(ctx, wruntime.SaveDialogOptions{
		Title: "Export", DefaultDirectory: dir, DefaultFilename: req.Filename, CanCreateDirectories: true,
	})
	if err != nil {
		answer["error"] = err.Error()
		return
	}
	if file == "" {
		answer["file"] = "" // cancelled
		return
	}
	if err := writeExport(ctx, w.srv.TrustedHandler(), req.Path, file); err != nil {
		answer["error"] = err.Error()
		return
	}
	answer["file"] = file
}

// writeExport writes the answer of h for path into file, replacing it only
// once the whole export is written.
func writeExport(ctx context.Context, h http.Handler, path, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	rw := &fileResponse{f: tmp, header: http.Header{}}
	h.ServeHTTP(rw, req)
	if cerr := tmp.Close(); rw.err == nil {
		rw.err = cerr
	}
	if rw.status != 0 && rw.status != http.StatusOK {
		return fmt.Errorf("export: HTTP %d", rw.status)
	}
	if rw.err != nil {
		return rw.err
	}
	return os.Rename(tmp.Name(), file)
}

// fileResponse streams a handler's answer into a file.
type fileResponse struct {
	f      *os.File
	header http.Header
	status int
	err    error
}

func (r *fileResponse) Header() http.Header { return r.header }

func (r *fileResponse) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *fileResponse) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if r.status != http.StatusOK {
		return len(b), nil // an error body: not the export
	}
	n, err := r.f.Write(b)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
