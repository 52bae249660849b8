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
	"encoding/json"
	"fmt"
	"log/slog"
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
	return startProvider(log, "fake gemini", `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, func(p *Provider, mux *http.ServeMux) {
		// The SDK names the method after a colon in the last path segment
		// (models/gemini-2.5-pro:streamGenerateContent), which ServeMux cannot
		// match with a wildcard, so one handler reads it.
		mux.HandleFunc("POST /{version}/models/{call}", p.gemini)
	})
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
	var req geminiRequest
	body, ok := readRequest(w, r, &req, `{"error":{"code":400,"message":"bad json","status":"INVALID_ARGUMENT"}}`)
	if !ok {
		return
	}
	prompt, last := promptOf(req.Contents, req.SystemInstruction, req.Tools)
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"totalTokens":%d}`, (len(prompt)+3)/4)
		return
	}
	if method != "generateContent" && method != "streamGenerateContent" {
		http.Error(w, `{"error":{"code":404,"message":"unknown method","status":"NOT_FOUND"}}`, http.StatusNotFound)
		return
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
	tokens, cached := p.account("gemini", r.URL.Path, body, prompt, compaction, output)
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
		writeJSON(w, resp)
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
