package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"tollgate/guard/api"
	"tollgate/pricing"
	"tollgate/storage"
)

// Longest a harness may hold a request open (long-poll or ask).
const maxWait = 300 * time.Second

// maxDeadlineSeconds bounds a harness's deadline (a day): longer is no
// deadline at all, since askTimeout ends the question first.
const maxDeadlineSeconds = 86400

// ---- engines ----

type registerBody struct {
	Harness string `json:"harness"`
	Version string `json:"version"`
	Profile string `json:"profile"`
	PID     int    `json:"pid"`
}

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var b registerBody
	if !decodeJSON(w, r, &b) {
		return
	}
	if strings.TrimSpace(b.Harness) == "" {
		writeFieldError(w, "harness", "required: the harness's name, e.g. \"dsh\"")
		return
	}
	e := s.engines.register(Engine{Harness: b.Harness, Version: b.Version, Profile: b.Profile, PID: b.PID})
	s.enginesChanged()
	writeJSON(w, http.StatusCreated, map[string]any{"engine": e.ID, "leaseSeconds": int(LeaseDuration / time.Second), "mode": s.settings.GlobalMode()})
}

func (s *Server) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	if !s.engines.heartbeat(r.PathValue("id")) {
		writeError(w, http.StatusNotFound, "no live engine "+strconv.Quote(r.PathValue("id"))+": its lease expired or tollgate restarted; register again")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"mode": s.settings.GlobalMode()})
}

func (s *Server) handleUnregister(w http.ResponseWriter, r *http.Request) {
	if !s.engines.remove(r.PathValue("id")) {
		writeError(w, http.StatusNotFound, "no live engine "+strconv.Quote(r.PathValue("id")))
		return
	}
	s.enginesChanged()
	w.WriteHeader(http.StatusNoContent)
}

// integrations lists the installed hook integrations; a verified one arms
// the guard.
func (s *Server) integrations() []api.Integration {
	if s.opts.Integrations == nil {
		return []api.Integration{}
	}
	return s.opts.Integrations()
}

// armed: a live engine lease, or an installed, verified hook.
// Armed says whether the guard is armed now (the pill's "not armed"
// otherwise): the exports' tollgate_armed.
func (s *Server) Armed() bool { return s.armed(s.engines.live()) }

func (s *Server) armed(engines int) bool {
	if engines > 0 {
		return true
	}
	for _, in := range s.integrations() {
		if in.Installed && in.Verified {
			return true
		}
	}
	return false
}

func (s *Server) handleEngines(w http.ResponseWriter, r *http.Request) {
	list := s.engines.list()
	writeJSON(w, http.StatusOK, map[string]any{"armed": s.armed(len(list)), "engines": list, "integrations": s.integrations()})
}

func (s *Server) enginesChanged() {
	n := s.engines.live()
	s.events.publish(EventEnginesChanged, api.EnginesChanged{Armed: s.armed(n), Engines: n})
}

// ---- recording requests ----

func (s *Server) handleRecordRequest(w http.ResponseWriter, r *http.Request) {
	session := r.PathValue("session")
	if !utf8.ValidString(session) {
		writeFieldError(w, "session", "the session id in the path is not valid UTF-8")
		return
	}
	var b api.RequestReport
	if !decodeJSON(w, r, &b) {
		return
	}
	rec, field, msg := s.requestRecord(session, b)
	if field != "" {
		writeFieldError(w, field, msg)
		return
	}
	priced, err := s.pricer.PriceRequest(rec.Profile, rec.Provider, rec.Model, rec.At, rec.Usage)
	if err != nil {
		// A profile that cannot price (a broken config edit) must not lose
		// the usage: store it at zero cost, say so, re-price later.
		s.log.Error("pricing a recorded request", "session", session, "profile", rec.Profile, "err", err)
		priced = PricedRequest{PricedBy: "none"}
	}
	if field := storage.CheckCost(priced.Cost); field != "" {
		// Prices are bounded where they are set, so this is a bug or a
		// config edited under us: store the usage at zero cost, as above.
		s.log.Error("pricing a recorded request gave a cost out of range", "session", session, "profile", rec.Profile, "field", field)
		priced = PricedRequest{PricedBy: "none"}
	}
	rec.Cost, rec.Prices, rec.PricedBy, rec.OffPeak, rec.TTLSeconds = priced.Cost, priced.Prices, priced.PricedBy, priced.OffPeak, priced.TTLSeconds
	st, err := s.store.RecordRequest(r.Context(), rec)
	if err != nil {
		s.log.Error("recording a request", "session", session, "err", err)
		writeError(w, http.StatusInternalServerError, "storing the request: "+err.Error())
		return
	}
	s.engines.touch(b.Engine)
	if st.Duplicate {
		w.Header().Set("Tollgate-Duplicate", "true")
	} else {
		s.events.publish(EventRequestRecord, api.RequestRecorded{
			Session: session, RequestID: st.RequestID, Seq: st.Seq, At: st.At, Purpose: st.Purpose, ContextTokens: st.ContextTokens, CostUSD: st.Cost.Total,
		})
		if st.Break != nil {
			s.events.publish(EventBreakDetected, *st.Break)
		}
	}
	writeJSON(w, http.StatusCreated, api.RecordedRequest{
		Session: session, RequestID: st.RequestID, Seq: st.Seq, ContextTokens: st.ContextTokens,
		CostUSD: st.Cost.Total, Cost: st.Cost, PricedBy: st.PricedBy, OffPeak: st.OffPeak,
	})
}

// requestRecord validates a body; a non-empty field names what is wrong.
func (s *Server) requestRecord(session string, b api.RequestReport) (storage.Request, string, string) {
	var rec storage.Request
	if b.RequestID == "" {
		return rec, "requestId", "required: a unique id per request, so retries are not counted twice"
	}
	if len(b.RequestID) > 512 {
		return rec, "requestId", "longer than 512 bytes"
	}
	if b.Usage == nil {
		return rec, "usage", "required: " + api.UsageKeysHint
	}
	if field, ok := b.Usage.Check(); !ok {
		return rec, field, "must be between 0 and 2^40"
	}
	switch b.Purpose {
	case "":
		b.Purpose = api.PurposeConversation
	case api.PurposeConversation, api.PurposeCompaction, api.PurposeSubagent:
	default:
		return rec, "purpose", "want conversation, compaction or subagent"
	}
	if b.ContextWindow < 0 {
		return rec, "contextWindow", "must be ≥ 0"
	}
	if b.ThresholdTokens < 0 {
		return rec, "thresholdTokens", "must be ≥ 0"
	}
	if strings.HasPrefix(b.Thread, "compaction:") {
		// The ledger reserves it for summary calls, each a thread of its
		// own that is never judged: a harness must not switch judging off.
		return rec, "thread", `the "compaction:" prefix is reserved; report a summary call with purpose compaction`
	}
	if len(b.StartedBy) > 64 || strings.Trim(b.StartedBy, "abcdefghijklmnopqrstuvwxyz-") != "" {
		return rec, "startedBy", "want a word such as user-prompt or tool-result (lower case and '-', at most 64 bytes)"
	}
	if len(b.Thread) > 256 {
		return rec, "thread", "longer than 256 bytes"
	}
	at := s.now().UTC()
	if b.At != "" {
		t, err := time.Parse(time.RFC3339Nano, b.At)
		if err != nil {
			return rec, "at", "want an RFC 3339 time such as 2026-11-30T10:00:00Z"
		}
		if why := storage.CheckTime(t, s.now()); why != "" {
			return rec, "at", b.At + " is " + why
		}
		at = t.UTC()
	}
	harness := b.Harness
	if e, ok := s.engines.get(b.Engine); ok {
		harness = cmpOr(harness, e.Harness)
		b.Profile = cmpOr(b.Profile, e.Profile)
	}
	rec = storage.Request{
		Session: storage.SessionMeta{ID: session, Harness: harness, Profile: b.Profile, Provider: b.Provider, Model: b.Model, Title: b.Title,
			ContextWindow: b.ContextWindow, ThresholdTokens: b.ThresholdTokens},
		RequestID: b.RequestID, At: at, Purpose: b.Purpose, Turn: string(b.Turn), Engine: b.Engine,
		Profile: b.Profile, Provider: b.Provider, Model: b.Model,
		Usage: pricing.Usage(*b.Usage),
		// What started an API-reported request is what it was for.
		Thread: b.Thread, StartedBy: cmpOr(b.StartedBy, b.Purpose),
	}
	return rec, "", ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ---- the gate ----

func (s *Server) handleRewrite(w http.ResponseWriter, r *http.Request) {
	session := r.PathValue("session")
	if !utf8.ValidString(session) {
		writeFieldError(w, "session", "the session id in the path is not valid UTF-8")
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	req, err := api.DecodeRewriteRequest(body)
	if err != nil {
		var fe *api.FieldError
		if errors.As(err, &fe) {
			writeFieldError(w, fe.Field, fe.Message)
		} else {
			writeError(w, http.StatusBadRequest, err.Error())
		}
		return
	}
	if req.Wait != nil && (*req.Wait < 0 || time.Duration(*req.Wait)*time.Second > maxWait) {
		writeFieldError(w, "wait", "want 0 to 300 seconds")
		return
	}
	if !(req.DeadlineSeconds >= 0 && req.DeadlineSeconds <= maxDeadlineSeconds) {
		// A huge value (1e308) would overflow the deadline's Duration into the past.
		writeFieldError(w, "deadlineSeconds", "want 0 to 86400 seconds")
		return
	}
	s.engines.touch(req.Engine)
	d, q := s.gate(r.Context(), session, &req)
	if q == nil {
		writeJSON(w, http.StatusOK, d)
		return
	}
	// A question: wait as long as the harness said it would (absent = until
	// the question's own deadline), else 202 and it polls.
	wait := time.Until(q.deadline) + time.Second
	if req.Wait != nil {
		wait = time.Duration(*req.Wait) * time.Second
	}
	if wait > 0 {
		if ans, ok := q.wait(r.Context(), wait); ok {
			writeJSON(w, http.StatusOK, ans)
			return
		}
	}
	writeJSON(w, http.StatusAccepted, pendingDecision(q))
}

func pendingDecision(q *question) api.Decision {
	dl := q.deadline
	return api.Decision{Rewrite: q.rec.ID, Status: api.StatusPending, Session: q.rec.Session.ID, Mode: q.rec.Mode, Quote: q.quote, DeadlineAt: &dl}
}

// gate prices a rewrite and decides it per ARCHITECTURE.md, "Modes and decisions". It returns either a
// decision, or a question that waits for a user.
func (s *Server) gate(ctx context.Context, session string, req *api.RewriteRequest) (api.Decision, *question) {
	now := s.now().UTC()
	harness, profile := "", req.Profile
	if e, ok := s.engines.get(req.Engine); ok {
		harness = e.Harness
		profile = cmpOr(profile, e.Profile)
	}
	// What the session already knows (from recorded requests) fills the
	// gaps: the dialog names the harness, the price table needs the model.
	known, _ := s.store.SessionMeta(ctx, session)
	harness = cmpOr(harness, known.Harness)
	profile = cmpOr(profile, known.Profile)
	mode, _ := s.effectiveMode(session, profile)
	rec := storage.Rewrite{
		ID:      newID("r_"),
		Session: storage.SessionMeta{ID: session, Harness: harness, Profile: profile, ContextWindow: req.ContextWindow, ThresholdTokens: req.ThresholdTokens},
		At:      now, Engine: req.Engine, Turn: req.Turn, Trigger: req.Trigger, Kind: rewriteKind(req.Plan),
		Source: "api", Mode: mode, Plan: planJSON(req),
	}
	rec.PreTokens = req.EnvelopeTokens
	for i := range req.Surface {
		rec.PreTokens += req.Surface[i].Tokens
	}

	// off: the harness compacts as shipped; nothing is priced or asked, but
	// the rewrite is still recorded as unguarded.
	if mode == ModeOff {
		return s.settle(ctx, rec, nil, req.Plan, api.Allow, api.ReasonOff, ""), nil
	}

	// The ledger knows when the session's cache entries expire (the TTL
	// they were written with, 1 h writes included): a question that comes
	// after that is priced as the expired cache it is, whatever idle time
	// the harness reported.
	expired := false
	if sess, err := s.store.Session(ctx, session); err == nil && sess.CacheWarmUntil != nil && now.After(*sess.CacheWarmUntil) {
		expired = true
	}
	quote, err := s.quote(req, profile, known, now, expired)
	if err != nil {
		// A guard fault never blocks the engine.
		s.log.Error("pricing a rewrite failed; allowing it", "session", session, "err", err)
		d := s.settle(ctx, rec, nil, req.Plan, api.Allow, api.ReasonPricingFailed, "pricing failed: "+err.Error())
		return d, nil
	}
	rec.Order = quote.Recommended
	rec.PredictedCold = &quote.ColdTokens
	if p := req.Prediction; p != nil {
		rec.PredictedBand = &storage.ColdBand{Low: p.Low, High: p.High}
	}
	rec.CostUSD = quote.CostUSD.BreakPremium
	if b, err := json.Marshal(quote); err == nil {
		rec.Quote = string(b)
	}

	switch {
	case req.Trigger == api.TriggerManual && !s.settings.GuardManual(profile):
		return s.settle(ctx, rec, quote, req.Plan, api.Allow, api.ReasonManual, "a compaction the user asked for"), nil
	case mode == ModeAuto:
		return s.settle(ctx, rec, quote, req.Plan, api.Allow, api.ReasonAuto, ""), nil
	case s.broker.muted(session, req.Turn):
		return s.settle(ctx, rec, quote, req.Plan, api.Decline, api.ReasonMuted, "declined earlier in this turn"), nil
	case s.events.questionProviders() == 0:
		s.log.Warn("rewrite declined: nobody can answer (no window, no browser UI with answers=1); set `mode: auto` in config.yaml or the pill to allow rewrites without asking",
			"session", session, "rewrite", rec.ID)
		return s.settle(ctx, rec, quote, req.Plan, api.Decline, api.ReasonNoQuestionProvider,
			"no question provider: open tollgate's window or browser UI, or set mode: auto to allow rewrites without asking"), nil
	}

	// ask: hold until an answer or min(askTimeout, the harness's deadline).
	timeout := s.settings.AskTimeout()
	if req.DeadlineSeconds > 0 {
		timeout = min(timeout, time.Duration(req.DeadlineSeconds*float64(time.Second)))
	}
	if ok, why := s.broker.reserve(session); !ok {
		// A guard that cannot take a question never blocks the engine: the
		// rewrite goes ahead unasked, and the answer says why.
		s.log.Warn("rewrite allowed unasked: too many questions wait", "session", session, "rewrite", rec.ID, "why", why)
		return s.settle(ctx, rec, quote, req.Plan, api.Allow, api.ReasonQuestionLimit,
			"tollgate could not take the question: "+why+"; allowed without asking"), nil
	}
	rec.DeadlineAt = now.Add(timeout)
	rec.Status = api.StatusPending
	if _, err := s.store.CreateRewrite(ctx, rec); err != nil {
		s.broker.release(session)
		s.log.Error("storing a question failed; allowing the rewrite", "session", session, "err", err)
		return decisionFor(rec, quote, req.Plan, api.Allow, api.ReasonPricingFailed), nil
	}
	q := &question{rec: rec, quote: quote, plan: req.Plan, deadline: rec.DeadlineAt}
	q.event = api.RewritePending{
		Rewrite: rec.ID, Session: session, Harness: harness, Profile: profile, Trigger: req.Trigger, Turn: req.Turn, Mode: mode,
		Quote: quote, Prediction: req.Prediction, AskedAt: now, DeadlineAt: rec.DeadlineAt, DeadlineSeconds: timeout.Seconds(),
	}
	s.broker.ask(q)
	s.events.publish(EventRewritePending, q.event)
	s.opts.raiseOnQuestion()
	return api.Decision{}, q
}

func (o Options) raiseOnQuestion() {
	if o.OnQuestion != nil {
		o.OnQuestion()
	}
}

// settle stores a decision taken at once (one commit) and publishes it.
func (s *Server) settle(ctx context.Context, rec storage.Rewrite, quote *pricing.Quote, plan pricing.Plan, decision, reason, message string) api.Decision {
	d := decisionFor(rec, quote, plan, decision, reason)
	d.Message = message
	rec.Status, rec.Decision, rec.Reason, rec.DecidedAt = api.StatusDecided, decision, reason, rec.At
	rec.Order = d.Order
	if _, err := s.store.CreateRewrite(ctx, rec); err != nil {
		// The decision stands (the engine must not wait on our disk); it is
		// only missing from the history.
		s.log.Error("storing a decision", "rewrite", rec.ID, "err", err)
	}
	if decision == api.Decline && reason != api.ReasonMuted {
		s.broker.mute(rec.Session.ID, rec.Turn)
	}
	s.events.publish(EventRewriteDecided, api.RewriteDecided{Rewrite: rec.ID, Session: rec.Session.ID, Decision: decision, Reason: reason, Mode: rec.Mode, Order: d.Order})
	return d
}

func (s *Server) quote(req *api.RewriteRequest, profile string, known storage.SessionMeta, at time.Time, expired bool) (q *pricing.Quote, err error) {
	defer func() {
		if p := recover(); p != nil { // a pricing bug must not take the gate down
			q, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	// The rewrite names a profile; the session knows the provider and model
	// its requests went to, for the built-in price table.
	model, err := s.pricer.CacheModel(profile, known.Provider, known.Model)
	if err != nil {
		return nil, err
	}
	qr := req.ToQuoteRequest(model, at)
	if expired {
		qr.IdleSeconds = max(qr.IdleSeconds, float64(model.TTLSeconds)+1)
	}
	quote, err := pricing.NewQuote(qr)
	if err != nil {
		return nil, err
	}
	return &quote, nil
}

func rewriteKind(p pricing.Plan) string {
	if p.Summarize != nil {
		return "summary"
	}
	return "prune"
}

// planJSON keeps the plan's ids and token counts, never any text.
func planJSON(req *api.RewriteRequest) string {
	b, err := json.Marshal(req.Plan)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// ---- questions, answers, outcomes ----

func (s *Server) handleGetRewrite(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	wait := time.Duration(0)
	if v := r.URL.Query().Get("wait"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 || math.IsNaN(secs) {
			writeFieldError(w, "wait", "want a number of seconds, 0 to 300")
			return
		}
		wait = min(time.Duration(secs*float64(time.Second)), maxWait)
	}
	if q, ok := s.broker.lookup(id); ok {
		if ans, done := q.wait(r.Context(), wait); done {
			writeJSON(w, http.StatusOK, ans)
		} else {
			writeJSON(w, http.StatusOK, pendingDecision(q))
		}
		return
	}
	rec, err := s.store.Rewrite(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no rewrite "+strconv.Quote(id))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	var plan pricing.Plan
	json.Unmarshal([]byte(rec.Plan), &plan)
	writeJSON(w, http.StatusOK, decisionFromRecord(rec, plan))
}

type answerBody struct {
	Choice string `json:"choice"`
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var b answerBody
	if !decodeJSON(w, r, &b) {
		return
	}
	var decision string
	switch b.Choice {
	case api.ChoiceAllowOnce, api.ChoiceAlwaysSession:
		decision = api.Allow
	case api.ChoiceNotNow:
		decision = api.Decline
	default:
		writeFieldError(w, "choice", "want allow-once, not-now or always-session")
		return
	}
	ans, err := s.broker.decide(r.Context(), id, decision, api.ReasonUser, answeredBy(r.Context()), false)
	switch {
	case errors.Is(err, storage.ErrAlreadyDecided):
		writeError(w, http.StatusConflict, "already decided: "+ans.Decision+" ("+ans.Reason+")")
		return
	case errors.Is(err, errExpired):
		writeError(w, http.StatusConflict, "already decided: the question's deadline passed and it was declined (timeout)")
		return
	case errors.Is(err, storage.ErrNotFound):
		if _, err := s.store.Rewrite(r.Context(), id); err == nil {
			writeError(w, http.StatusConflict, "already decided")
		} else {
			writeError(w, http.StatusNotFound, "no pending rewrite "+strconv.Quote(id))
		}
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if b.Choice == api.ChoiceAlwaysSession {
		if err := s.broker.setSessionMode(r.Context(), ans.Session, ModeAuto); err != nil {
			s.log.Error("storing the session mode", "session", ans.Session, "err", err)
		} else {
			s.events.publish(EventModeChanged, api.ModeChanged{Scope: "session", Session: ans.Session, Mode: ModeAuto})
		}
	}
	writeJSON(w, http.StatusOK, ans)
}

type outcomeBody struct {
	Applied *bool  `json:"applied"`
	Error   string `json:"error"`
}

func (s *Server) handleOutcome(w http.ResponseWriter, r *http.Request) {
	var b outcomeBody
	if !decodeJSON(w, r, &b) {
		return
	}
	if b.Applied == nil {
		writeFieldError(w, "applied", "required: true when the rewrite landed")
		return
	}
	err := s.store.SetRewriteOutcome(r.Context(), r.PathValue("id"), *b.Applied, b.Error)
	if errors.Is(err, storage.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no rewrite "+strconv.Quote(r.PathValue("id")))
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// answeredBy names the owner's door a question was answered through.
func answeredBy(ctx context.Context) string {
	if who := Caller(ctx); who != "" {
		return who
	}
	return CallerWindow
}
