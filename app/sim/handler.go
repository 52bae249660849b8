package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"tollgate/guard/api"
	"tollgate/guard/client"
	"tollgate/pricing"
)

// simulateBody is POST /v1/simulate: "Try a simulated session" in the UI.
type simulateBody struct {
	Window string `json:"window"` // default 128k
	Steps  int    `json:"steps"`  // default 60
}

// Route is "Try a simulated session" in the UI.
const Route = "POST /v1/simulate"

// Handler serves Route: it runs the scripted session against this tollgate
// in the background, through guard/client like any harness — the
// cache-aware session in the configured mode (so a newcomer sees the
// dialog), the prune-first one in auto beside it for comparison.
type Handler struct {
	// Endpoint reaches this tollgate (in-process).
	Endpoint func() client.Endpoint
	// Model is the profile the sessions are priced with and its cache model.
	Model func() (profile string, model pricing.CacheModel, err error)
	// Background is cancelled when tollgate closes: a running simulation
	// stops with it.
	Background context.Context
	Log        *slog.Logger

	running atomic.Bool
}

func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var b simulateBody
	if r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil && !errors.Is(err, io.EOF) {
			api.WriteError(w, http.StatusBadRequest, "(body)", "want {\"window\":\"128k\",\"steps\":60}: "+err.Error())
			return
		}
	}
	window := int64(128 << 10)
	if b.Window != "" {
		n, err := ParseTokens(b.Window)
		if err != nil || n < 8000 || n > 4<<20 {
			api.WriteError(w, http.StatusBadRequest, "window", "want 8k to 4M tokens, e.g. 128k")
			return
		}
		window = n
	}
	steps := 60
	if b.Steps != 0 {
		if b.Steps < 1 || b.Steps > 1000 {
			api.WriteError(w, http.StatusBadRequest, "steps", "want 1 to 1000")
			return
		}
		steps = b.Steps
	}
	if !s.running.CompareAndSwap(false, true) {
		api.WriteError(w, http.StatusConflict, "", "a simulated session is already running")
		return
	}
	profile, model, err := s.Model()
	if err != nil {
		s.running.Store(false)
		api.WriteError(w, http.StatusBadRequest, "", "pricing the simulation: "+err.Error())
		return
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	sessions := []string{
		fmt.Sprintf("sim-%s-%s", stamp, pricing.OrderSummarizeThenPruneTail),
		fmt.Sprintf("sim-%s-%s", stamp, pricing.OrderPruneThenSummarize),
	}
	go func() {
		defer s.running.Store(false)
		ctx := s.Background
		c := client.New(s.Endpoint(), s.Log)
		if err := c.Register(ctx, client.Engine{Harness: "simulate", Profile: profile}); err != nil {
			s.Log.Error("simulation: registering", "err", err)
			return
		}
		defer c.Close()
		for i, order := range []string{pricing.OrderSummarizeThenPruneTail, pricing.OrderPruneThenSummarize} {
			mode := "" // the cache-aware session asks as configured
			if i == 1 {
				mode = "auto"
			}
			rep, err := RunSimulation(ctx, c, SimOptions{Window: window, Steps: steps, Order: order, Mode: mode, Profile: profile, Model: model, Session: sessions[i]})
			if ctx.Err() != nil {
				s.Log.Info("simulation stopped: tollgate is closing", "session", sessions[i])
				return
			}
			if err != nil {
				s.Log.Error("simulation failed", "session", sessions[i], "err", err)
				return
			}
			s.Log.Info("simulated session done", "session", rep.Session, "folds", rep.Folds, "uncached", rep.Uncached, "summaryCalls", rep.SummaryCalls)
		}
	}()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	json.NewEncoder(w).Encode(map[string]any{"sessions": sessions, "window": window, "steps": steps})
}
