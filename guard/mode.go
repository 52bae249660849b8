package guard

import (
	"fmt"
	"net/http"

	"tollgate/guard/api"
)

// Modes (ARCHITECTURE.md, "Modes and decisions").
const (
	ModeAsk  = "ask"
	ModeAuto = "auto"
	ModeOff  = "off"
)

func validMode(m string) bool { return m == ModeAsk || m == ModeAuto || m == ModeOff }

// effectiveMode resolves session override > profile default > global
// default, and says which scope decided.
func (s *Server) effectiveMode(session, profile string) (mode, scope string) {
	if session != "" {
		if m := s.broker.sessionMode(session); m != "" {
			return m, "session"
		}
	}
	if profile != "" {
		if m, ok := s.settings.ProfileMode(profile); ok && validMode(m) {
			return m, "profile"
		}
	}
	return s.settings.GlobalMode(), "global"
}

// modeState is the pill's state for a session/profile selection.
func (s *Server) modeState(session, profile string) api.ModeState {
	mode, scope := s.effectiveMode(session, profile)
	armed := s.armed(s.engines.live())
	st := api.ModeState{Mode: mode, Scope: scope, Armed: armed, Global: s.settings.GlobalMode(), Label: "Cache: " + mode}
	if !armed {
		// The pill never promises protection nobody backs.
		st.Label = "Cache: not armed"
	}
	if profile != "" {
		st.ProfileMode, _ = s.settings.ProfileMode(profile)
	}
	if session != "" {
		st.SessionMode = s.broker.sessionMode(session)
	}
	return st
}

func (s *Server) handleGetMode(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	writeJSON(w, http.StatusOK, s.modeState(q.Get("session"), q.Get("profile")))
}

type putModeBody struct {
	Scope   string `json:"scope"`
	Profile string `json:"profile"`
	Session string `json:"session"`
	Mode    string `json:"mode"`
}

func (s *Server) handlePutMode(w http.ResponseWriter, r *http.Request) {
	var b putModeBody
	if !decodeJSON(w, r, &b) {
		return
	}
	if b.Mode != "" && !validMode(b.Mode) {
		writeFieldError(w, "mode", "want ask, auto or off")
		return
	}
	var err error
	switch b.Scope {
	case "global":
		if b.Mode == "" {
			writeFieldError(w, "mode", "required for the global scope: ask, auto or off")
			return
		}
		err = s.settings.SetGlobalMode(b.Mode)
	case "profile":
		if b.Profile == "" {
			writeFieldError(w, "profile", "required for the profile scope")
			return
		}
		err = s.settings.SetProfileMode(b.Profile, b.Mode)
	case "session":
		if b.Session == "" {
			writeFieldError(w, "session", "required for the session scope")
			return
		}
		err = s.broker.setSessionMode(r.Context(), b.Session, b.Mode)
	default:
		writeFieldError(w, "scope", "want global, profile or session")
		return
	}
	if err != nil {
		if fn, ok := err.(FieldNamer); ok {
			writeFieldError(w, fn.FieldName(), err.Error())
			return
		}
		writeError(w, http.StatusInternalServerError, "saving the mode: "+err.Error())
		return
	}
	s.events.publish(EventModeChanged, api.ModeChanged{Scope: b.Scope, Profile: b.Profile, Session: b.Session, Mode: b.Mode})
	writeJSON(w, http.StatusOK, s.modeState(b.Session, b.Profile))
}

// ModeState is the pill's state, as GET /v1/mode answers it: the window's
// tray reads it in-process.
func (s *Server) ModeState(session, profile string) api.ModeState {
	return s.modeState(session, profile)
}

// SetGlobalMode sets the global mode, as PUT /v1/mode with scope global
// does (the tray's menu), and announces it.
func (s *Server) SetGlobalMode(mode string) error {
	if !validMode(mode) {
		return fmt.Errorf("mode %q: want ask, auto or off", mode)
	}
	if err := s.settings.SetGlobalMode(mode); err != nil {
		return err
	}
	s.events.publish(EventModeChanged, api.ModeChanged{Scope: "global", Mode: mode})
	return nil
}
