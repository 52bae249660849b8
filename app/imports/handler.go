package imports

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"tollgate/app/config"
	"tollgate/app/importer"
	"tollgate/guard"
	"tollgate/guard/api"
	"tollgate/storage/sqlite"
)

// EventImportProgress carries a running import's progress to the UI (SSE in
// the browser, Wails events in the window), beside the guard's events.
const EventImportProgress = "import.progress"

// importPathsBody is POST /v1/import with paths: what the window sends after
// its file dialog, and what scripts send.
type importPathsBody struct {
	Paths   []string `json:"paths"`
	Harness string   `json:"harness"`
}

// Route is the UI's Import: uploads of session logs (spooled to disk) may be
// large, so it declares its own body limit.
const (
	Route     = "POST /v1/import"
	BodyLimit = 2 << 30
)

// MaxUploadFiles is the most files one upload may carry: a picked folder
// of transcripts is hundreds; more is refused before anything is stored.
const MaxUploadFiles = 10000

// Handler serves Route for one database.
type Handler struct {
	DB       *sqlite.DB
	Settings *config.Settings
	// Publish sends an event to the UI (the guard's event stream).
	Publish func(event string, data any)
}

// ServeHTTP is the UI's Import action. It takes either a multipart
// upload (field "file", repeated; optional "harness") — the browser's and
// the window's file picker — or JSON {"paths":[…],"harness"}. It answers
// when the import is done with the Result; progress goes out as
// import.progress events meanwhile. A file that fails is stored not at
// all (its error names file and line); the others still are.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var sources []Source
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "multipart/form-data":
		dir, err := os.MkdirTemp("", "tollgate-upload-*")
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, "", "spooling the upload: "+err.Error())
			return
		}
		defer os.RemoveAll(dir)
		mr, err := r.MultipartReader()
		if err != nil {
			api.WriteError(w, http.StatusBadRequest, "(body)", err.Error())
			return
		}
		harness := ""
		files := 0
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				api.WriteError(w, tooLargeOr(err, http.StatusBadRequest), "(body)", "reading the upload: "+err.Error())
				return
			}
			switch part.FormName() {
			case "harness":
				b, _ := io.ReadAll(io.LimitReader(part, 64))
				harness = strings.TrimSpace(string(b))
			case "file":
				name := filepath.Base(part.FileName())
				if name == "." || name == "/" || name == "" {
					api.WriteError(w, http.StatusBadRequest, "file", "an uploaded file needs a name")
					return
				}
				if files++; files > MaxUploadFiles {
					api.WriteError(w, http.StatusRequestEntityTooLarge, "file", "more than "+strconv.Itoa(MaxUploadFiles)+" files in one upload; import a folder by path instead")
					return
				}
				// Spooled to disk: the parser may read files in parallel,
				// and an upload can be hundreds of megabytes. Each spooled
				// file is closed at once and opened again when it is read,
				// so an upload of many parts holds few descriptors.
				f, err := os.CreateTemp(dir, "upload-*")
				if err != nil {
					api.WriteError(w, http.StatusInternalServerError, "", err.Error())
					return
				}
				_, err = io.Copy(f, part)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					api.WriteError(w, tooLargeOr(err, http.StatusBadRequest), "file", "reading "+name+": "+err.Error())
					return
				}
				lf := &spooled{path: f.Name()}
				defer lf.Close()
				sources = append(sources, Source{Name: name, Reader: lf})
			}
		}
		for i := range sources {
			sources[i].Harness = harness
		}
	case "application/json", "":
		var b importPathsBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			api.WriteError(w, tooLargeOr(err, http.StatusBadRequest), "(body)", `want {"paths":["…"],"harness":"`+exampleHarness()+`"} or a multipart upload: `+err.Error())
			return
		}
		for i, p := range b.Paths {
			if !filepath.IsAbs(p) {
				api.WriteError(w, http.StatusBadRequest, "paths["+strconv.Itoa(i)+"]", "want an absolute path, got "+p)
				return
			}
			sources = append(sources, Source{Path: p, Harness: b.Harness})
		}
	default:
		api.WriteError(w, http.StatusUnsupportedMediaType, "", "send multipart/form-data or application/json")
		return
	}
	if len(sources) == 0 {
		api.WriteError(w, http.StatusBadRequest, "file", "nothing to import: upload files or name paths")
		return
	}
	res, err := Files(r.Context(), h.DB, h.Settings, sources, func(p Progress) {
		h.Publish(EventImportProgress, p)
	})
	if res.Files == nil {
		res.Files = []FileResult{}
	}
	if res.Sessions == nil {
		res.Sessions = []string{}
	}
	body := map[string]any{"result": res}
	status := http.StatusOK
	if err != nil {
		body["error"] = map[string]string{"code": "bad_request", "message": err.Error()}
		if res.Requests == 0 && res.Updated == 0 && res.Folds == 0 {
			status = http.StatusBadRequest
		}
	}
	api.WriteJSON(w, status, body)
}

func tooLargeOr(err error, status int) int {
	if guard.IsTooLarge(err) {
		return http.StatusRequestEntityTooLarge
	}
	return status
}

// spooled is an uploaded file on disk, opened on its first read and closed
// at its end.
type spooled struct {
	path string
	f    *os.File
	done bool
}

func (s *spooled) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	if s.f == nil {
		f, err := os.Open(s.path)
		if err != nil {
			return 0, err
		}
		s.f = f
	}
	n, err := s.f.Read(p)
	if err != nil {
		s.Close()
		s.done = true
	}
	return n, err
}

func (s *spooled) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// exampleHarness names a harness for a usage message: the first
// registered.
func exampleHarness() string {
	if hs := importer.Harnesses(); len(hs) > 0 {
		return hs[0]
	}
	return "HARNESS"
}
