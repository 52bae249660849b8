package guard

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tollgate/guard/api"
	"tollgate/storage"
)

func (s *Server) storeError(w http.ResponseWriter, what string, err error) {
	if errors.Is(err, storage.ErrNotFound) {
		writeError(w, http.StatusNotFound, what+" not found")
		return
	}
	s.log.Error("reading "+what, "err", err)
	writeError(w, http.StatusInternalServerError, err.Error())
}

// withMode fills a session's effective mode.
func (s *Server) withMode(x api.Session) api.Session {
	x.Mode, _ = s.effectiveMode(x.ID, x.Profile)
	return x
}

// queryInt reads the query parameter name as a whole number from min to
// max, def when it is absent. ok is false when it was not, and the answer
// (400, naming it) is written.
func queryInt(w http.ResponseWriter, q url.Values, name string, def, min, max int) (n int, ok bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		writeFieldError(w, name, fmt.Sprintf("want %d to %d", min, max))
		return 0, false
	}
	return n, true
}

// period is what a summary read covers: the last days days in loc, today
// included, from since (the start of the local day days-1 days ago).
type period struct {
	loc   *time.Location
	days  int
	since time.Time
}

// queryPeriod reads ?tz, an IANA time zone name (UTC when absent), and
// ?days (1 to 3660, 30 when absent). ok is false when one is not, and the
// answer (400, naming it) is written.
func (s *Server) queryPeriod(w http.ResponseWriter, q url.Values) (p period, ok bool) {
	p.loc = time.UTC
	if tz := q.Get("tz"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			writeFieldError(w, "tz", "unknown time zone "+strconv.Quote(tz)+": want an IANA name such as Europe/Berlin")
			return p, false
		}
		p.loc = loc
	}
	if p.days, ok = queryInt(w, q, "days", 30, 1, 3660); !ok {
		return p, false
	}
	now := s.now().In(p.loc)
	p.since = time.Date(now.Year(), now.Month(), now.Day()-(p.days-1), 0, 0, 0, 0, p.loc)
	return p, true
}

func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, ok := queryInt(w, q, "limit", 50, 1, 1000)
	if !ok {
		return
	}
	list, err := s.store.Sessions(r.Context(), limit, q.Get("before"))
	if err != nil {
		writeFieldError(w, "before", err.Error())
		return
	}
	for i := range list.Sessions {
		list.Sessions[i] = s.withMode(list.Sessions[i])
	}
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	x, err := s.store.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, "session "+strconv.Quote(r.PathValue("id")), err)
		return
	}
	writeJSON(w, http.StatusOK, s.withMode(x))
}

func (s *Server) handleSeries(w http.ResponseWriter, r *http.Request) {
	x, err := s.store.Series(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, "session "+strconv.Quote(r.PathValue("id")), err)
		return
	}
	x.Session = s.withMode(x.Session)
	writeJSON(w, http.StatusOK, x)
}

func (s *Server) handleSpend(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	by := q.Get("by")
	if by == "" {
		by = "day"
	}
	if by != "day" && by != "profile" && by != "model" {
		writeFieldError(w, "by", "want day, profile or model")
		return
	}
	p, ok := s.queryPeriod(w, q)
	if !ok {
		return
	}
	sp, err := s.store.Spend(r.Context(), by, p.loc, p.since)
	if err != nil {
		s.storeError(w, "spend", err)
		return
	}
	writeJSON(w, http.StatusOK, sp)
}

func (s *Server) handleSessionBreaks(w http.ResponseWriter, r *http.Request) {
	b, err := s.store.SessionBreaks(r.Context(), r.PathValue("id"))
	if err != nil {
		s.storeError(w, "session "+strconv.Quote(r.PathValue("id")), err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

// handleBreaks sums the cache breaks of the last days (?days=N, default
// 30, from the start of the local day in ?tz) and names the costliest
// sessions (?limit=N, default 10).
func (s *Server) handleBreaks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, ok := s.queryPeriod(w, q)
	if !ok {
		return
	}
	limit, ok := queryInt(w, q, "limit", 10, 1, 100)
	if !ok {
		return
	}
	sum, err := s.store.BreakSummary(r.Context(), p.since, limit)
	if err != nil {
		s.storeError(w, "breaks", err)
		return
	}
	sum.Days = p.days
	writeJSON(w, http.StatusOK, sum)
}

func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	if err := s.store.DeleteSession(r.Context(), r.PathValue("id")); err != nil {
		s.storeError(w, "session "+strconv.Quote(r.PathValue("id")), err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleDeleteAll(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("confirm") != "all" {
		writeFieldError(w, "confirm", "deleting every session needs ?confirm=all")
		return
	}
	n, err := s.store.DeleteAll(r.Context())
	if err != nil {
		s.storeError(w, "sessions", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"deleted": n})
}

// ---- export ----

// Exporter streams requests and rewrites; *sqlite.DB implements it.
type Exporter interface {
	ExportRequests(ctx context.Context, sessionID string, fn func(api.ExportedRequest) error) error
	ExportRewrites(ctx context.Context, sessionID string, fn func(api.Fold) error) error
}

func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	session := r.PathValue("id")
	if session != "" {
		if _, err := s.store.Session(r.Context(), session); err != nil {
			s.storeError(w, "session "+strconv.Quote(session), err)
			return
		}
	}
	exp, ok := s.store.(Exporter)
	if !ok {
		writeError(w, http.StatusNotImplemented, "this store cannot export")
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	name := "tollgate-export"
	if session != "" {
		name = "tollgate-" + sanitizeFilename(session)
	}
	switch format {
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
		cw := csv.NewWriter(w)
		cw.Write([]string{"session", "requestId", "seq", "at", "purpose", "turn", "profile", "provider", "model",
			"inputTokens", "cacheReadTokens", "cacheWriteTokens", "cacheWrite1hTokens", "outputTokens", "contextTokens",
			"costInputUSD", "costCacheReadUSD", "costCacheWriteUSD", "costOutputUSD", "costUSD", "pricedBy", "offPeak"})
		i := strconv.FormatInt
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
		err := exp.ExportRequests(r.Context(), session, func(e api.ExportedRequest) error {
			t := csvText
			return cw.Write([]string{t(e.Session), t(e.RequestID), i(e.Seq, 10), e.At.Format(time.RFC3339Nano), t(e.Purpose), t(e.Turn), t(e.Profile), t(e.Provider), t(e.Model),
				i(e.Usage.Input, 10), i(e.Usage.CacheRead, 10), i(e.Usage.CacheWrite, 10), i(e.Usage.CacheWrite1h, 10), i(e.Usage.Output, 10), i(e.ContextTokens, 10),
				f(e.Cost.Input), f(e.Cost.CacheRead), f(e.Cost.CacheWrite), f(e.Cost.Output), f(e.Cost.Total), t(e.PricedBy), strconv.FormatBool(e.OffPeak)})
		})
		cw.Flush()
		if err != nil {
			s.log.Error("exporting CSV", "err", err)
		}
	case "json":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.json"`)
		s.exportJSON(w, r, exp, session)
	default:
		writeFieldError(w, "format", "want json or csv")
	}
}

// csvText neutralises a text cell a spreadsheet would run as a formula
// (CSV injection): one that starts with =, +, -, @, a tab or a carriage
// return gets a leading apostrophe. Numbers are written by the export
// itself and left alone.
func csvText(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// exportJSON streams {"sessions":[…],"requests":[…],"rewrites":[…]} without
// holding the whole database in memory.
func (s *Server) exportJSON(w http.ResponseWriter, r *http.Request, exp Exporter, session string) {
	enc := json.NewEncoder(w)
	w.Write([]byte(`{"sessions":[`))
	if session != "" {
		x, _ := s.store.Session(r.Context(), session)
		enc.Encode(s.withMode(x))
	} else {
		first, cursor := true, ""
		for {
			page, err := s.store.Sessions(r.Context(), 1000, cursor)
			if err != nil {
				break
			}
			for _, x := range page.Sessions {
				if !first {
					w.Write([]byte(","))
				}
				first = false
				enc.Encode(s.withMode(x))
			}
			if page.Next == nil {
				break
			}
			cursor = *page.Next
		}
	}
	w.Write([]byte(`],"requests":[`))
	first := true
	exp.ExportRequests(r.Context(), session, func(e api.ExportedRequest) error {
		if !first {
			w.Write([]byte(","))
		}
		first = false
		return enc.Encode(e)
	})
	w.Write([]byte(`],"rewrites":[`))
	first = true
	exp.ExportRewrites(r.Context(), session, func(f api.Fold) error {
		if !first {
			w.Write([]byte(","))
		}
		first = false
		return enc.Encode(f)
	})
	w.Write([]byte("]}\n"))
}

func sanitizeFilename(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}

// ---- profiles and settings ----

// SettingsEditor is the Settings page's view of config.yaml; the app
// implements it. Errors that name a key implement FieldNamer.
type SettingsEditor interface {
	ProfilesView() any
	SetProfileKeys(name string, keys map[string]any) error
	SetAskTimeout(d time.Duration) error
	ProfileView(name string) (any, bool)
}

func (s *Server) editor(w http.ResponseWriter) (SettingsEditor, bool) {
	ed, ok := s.settings.(SettingsEditor)
	if !ok {
		writeError(w, http.StatusNotImplemented, "settings cannot be edited in this build")
	}
	return ed, ok
}

func (s *Server) handleProfiles(w http.ResponseWriter, r *http.Request) {
	if ed, ok := s.editor(w); ok {
		writeJSON(w, http.StatusOK, ed.ProfilesView())
	}
}

func (s *Server) handlePutProfile(w http.ResponseWriter, r *http.Request) {
	ed, ok := s.editor(w)
	if !ok {
		return
	}
	var keys map[string]any
	if !decodeJSON(w, r, &keys) {
		return
	}
	name := r.PathValue("name")
	if err := ed.SetProfileKeys(name, keys); err != nil {
		if fn, ok := err.(FieldNamer); ok {
			writeFieldError(w, fn.FieldName(), err.Error())
			return
		}
		writeError(w, http.StatusInternalServerError, "saving profile: "+err.Error())
		return
	}
	view, _ := ed.ProfileView(name)
	writeJSON(w, http.StatusOK, view)
}

type settingsBody struct {
	AskTimeout *string `json:"askTimeout"`
}

func (s *Server) handlePutSettings(w http.ResponseWriter, r *http.Request) {
	ed, ok := s.editor(w)
	if !ok {
		return
	}
	var b settingsBody
	if !decodeJSON(w, r, &b) {
		return
	}
	if b.AskTimeout != nil {
		d, err := time.ParseDuration(*b.AskTimeout)
		if err != nil || d <= 0 || d > time.Hour {
			writeFieldError(w, "askTimeout", "want a duration from 1s to 1h, such as 120s")
			return
		}
		if err := ed.SetAskTimeout(d); err != nil {
			writeError(w, http.StatusInternalServerError, "saving askTimeout: "+err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, ed.ProfilesView())
}

type repriceBody struct {
	Session string `json:"session"`
}

func (s *Server) handleReprice(w http.ResponseWriter, r *http.Request) {
	if s.opts.Reprice == nil {
		writeError(w, http.StatusNotImplemented, "re-pricing is not available")
		return
	}
	var b repriceBody
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &b); err != nil {
			field, msg := describeJSONError(err)
			writeFieldError(w, field, msg)
			return
		}
	}
	reqs, sessions, err := s.opts.Reprice(r.Context(), b.Session)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"requests": reqs, "sessions": sessions})
}
