package harness

// The fake Gemini endpoint: the Gemini API's generateContent and
// streamGenerateContent (server-sent events with ?alt=sse), as the
// @google/genai SDK inside Gemini CLI calls them under
// GOOGLE_GEMINI_BASE_URL (POST /v1beta/models/{model}:{method}). It shares
// the fake provider's honest accounting (Provider.account): a request's
// prompt is its system instruction, tools and contents in order at 4 bytes a
// token, and cachedContentTokenCount is the longest prefix it shares with an
// earlier request. Like the real API, promptTokenCount includes the cached
// tokens (https://ai.google.dev/api/generate-content, UsageMetadata, read
// 2026-12-01).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

type geminiRequest struct {
	Contents          []json.RawMessage `json:"contents"`
	SystemInstruction json.RawMessage   `json:"systemInstruction"`
	Tools             json.RawMessage   `json:"tools"`
}

// StartGeminiProvider serves the fake Gemini endpoint on 127.0.0.1 (a free
// port). Its calls are API "gemini".
func StartGeminiProvider(log *slog.Logger) (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := &Provider{URL: "http://" + ln.Addr().String(), ln: ln, log: log}
	mux := http.NewServeMux()
	// The SDK names the method after a colon in the last path segment
	// (models/gemini-2.5-pro:streamGenerateContent), which ServeMux cannot
	// match with a wildcard, so one handler reads it.
	mux.HandleFunc("POST /{version}/models/{call}", p.gemini)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.log.Info("fake gemini: unhandled", "method", r.Method, "path", r.URL.Path)
		http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
	})
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// Evict forgets every cached prefix, as a provider whose cache entries
// expired would: the next request reads nothing from the cache.
func (p *Provider) Evict() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prefixes = nil
}

func (p *Provider) gemini(w http.ResponseWriter, r *http.Request) {
	model, method, ok := strings.Cut(r.PathValue("call"), ":")
	if !ok {
		http.Error(w, `{"error":{"code":400,"message":"no method","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	var prompt bytes.Buffer
	prompt.Write(req.SystemInstruction)
	prompt.Write(req.Tools)
	for _, c := range req.Contents {
		prompt.Write(c)
	}
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, (prompt.Len()+3)/4)
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		http.Error(w, `{"error":{"code":404,"message":"unknown method","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
	}
	last := ""
	if n := len(req.Contents); n > 0 {
		last = string(req.Contents[n-1])
	}
	// Gemini CLI's chat compression asks its model for a <state_snapshot>
	// (context/chatCompressionService.ts), then asks it to check that
	// snapshot: both are summary calls.
	compaction := strings.Contains(last, "state_snapshot")
	text := "ok."
	if compaction {
		text = "<state_snapshot><overall_goal>keep the notes</overall_goal></state_snapshot>"
	}
	output := int64(len(text)+3) / 4
	tokens, cached := p.account("gemini", r.URL.Path, body, prompt.Bytes(), compaction, output)
	p.log.Info("fake gemini: "+method, "model", model, "prompt", tokens, "cached", cached, "compaction", compaction)
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}},
			"finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{
			"promptTokenCount": tokens, "candidatesTokenCount": output, "cachedContentTokenCount": cached,
			"totalTokenCount": tokens + output,
		},
		"modelVersion": model,
		"responseId":   fmt.Sprintf("fake-%d", time.Now().UnixNano()),
	}
	if method == "generateContent" {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	b, _ := json.Marshal(resp)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}
