package guard

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Event names (ARCHITECTURE.md, "The API").
const (
	EventRewritePending = "rewrite.pending"
	EventRewriteDecided = "rewrite.decided"
	EventRequestRecord  = "request.recorded"
	EventModeChanged    = "mode.changed"
	EventEnginesChanged = "engines.changed"
	EventBreakDetected  = "break.detected"
)

// pingInterval keeps proxies and browsers from closing an idle stream.
const pingInterval = 15 * time.Second

type event struct {
	name string
	data []byte // JSON
}

type subscriber struct {
	ch      chan event
	answers bool
}

// hub fans events out to SSE subscribers and to the desktop window. Only
// subscribers that said answers=1, and an attached window, are question
// providers: a monitoring client must not defeat fail-closed.
type hub struct {
	log     *slog.Logger
	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	windows map[int]func(name string, data any)
	nextWin int
}

func newHub(log *slog.Logger) *hub {
	return &hub{log: log, subs: map[*subscriber]struct{}{}, windows: map[int]func(string, any){}}
}

func (h *hub) publish(name string, data any) {
	h.mu.Lock()
	nobody := len(h.subs) == 0 && len(h.windows) == 0
	h.mu.Unlock()
	if nobody { // nobody listens: skip encoding (the recording hot path)
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		h.log.Error("encoding event", "event", name, "err", err)
		return
	}
	ev := event{name: name, data: b}
	h.mu.Lock()
	wins := make([]func(string, any), 0, len(h.windows))
	for _, w := range h.windows {
		wins = append(wins, w)
	}
	for s := range h.subs {
		select {
		case s.ch <- ev:
		default:
			// A subscriber that cannot keep up loses this event rather than
			// stalling the gate; its UI refreshes on the next one.
			h.log.Warn("event dropped for a slow subscriber", "event", name)
		}
	}
	h.mu.Unlock()
	for _, w := range wins {
		w(name, json.RawMessage(b))
	}
}

func (h *hub) subscribe(answers bool) *subscriber {
	s := &subscriber{ch: make(chan event, 256), answers: answers}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// questionProviders counts who can answer a question right now.
func (h *hub) questionProviders() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.windows)
	for s := range h.subs {
		if s.answers {
			n++
		}
	}
	return n
}

// Publish sends an event to every subscriber and the window (the app's own
// routes use it, e.g. for import progress).
func (s *Server) Publish(name string, data any) { s.events.publish(name, data) }

// AttachWindow forwards every event to the desktop window (through emit,
// which wraps the Wails runtime) and counts the window as a question
// provider until detach is called.
func (s *Server) AttachWindow(emit func(name string, data any)) (detach func()) {
	h := s.events
	h.mu.Lock()
	id := h.nextWin
	h.nextWin++
	h.windows[id] = emit
	h.mu.Unlock()
	// Questions already waiting reach the window too.
	for _, p := range s.broker.pendingEvents() {
		b, _ := json.Marshal(p)
		emit(EventRewritePending, json.RawMessage(b))
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.windows, id)
			h.mu.Unlock()
		})
	}
}

// handleEvents streams Server-Sent Events.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming is not supported on this connection")
		return
	}
	answers := r.URL.Query().Get("answers") == "1"
	sub := s.events.subscribe(answers)
	defer s.events.unsubscribe(sub)

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n: tollgate events; answers=%v\n\n", answers)
	// A UI that connects while a question waits must see it.
	for _, p := range s.broker.pendingEvents() {
		b, _ := json.Marshal(p)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", EventRewritePending, b)
	}
	flusher.Flush()

	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		case ev := <-sub.ch:
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data); err != nil {
				return
			}
			flusher.Flush()
		case <-ping.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}
