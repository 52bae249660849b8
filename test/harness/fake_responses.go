package harness

// The fake provider's OpenAI Responses API, as Codex CLI talks to it
// (codex-rs/codex-api, read 2026-12-01 for @openai/codex 0.171.0):
//
//   - POST /v1/responses with "stream": true answers Server-Sent Events:
//     response.created, response.output_item.done (one assistant message)
//     and response.completed carrying the usage — input_tokens INCLUDE
//     input_tokens_details.cached_tokens, as OpenAI reports them.
//   - Codex compacts an OpenAI provider's history remotely ("remote
//     compaction v2", client_metadata's request_kind "compaction"): a
//     streamed /v1/responses request whose last input item is
//     {"type":"compaction_trigger"}, answered with exactly one output item
//     of type "compaction" (opaque encrypted_content) — Codex fails the
//     compaction otherwise. It counts as a compaction.
//   - A /v1/responses request whose last user message is Codex's own
//     compaction prompt (a local compaction, for providers that are not
//     OpenAI) counts as a compaction too; so does the older
//     POST /v1/responses/compact.
//
// The cached figure follows OpenAI's prompt cache: the longest prefix shared
// with an earlier request, nothing below 1,024 tokens, then in steps of 128.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// responsesRoutes adds the Responses API to the fake provider's mux.
func (p *Provider) responsesRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/responses", p.responses)
	mux.HandleFunc("POST /responses", p.responses)
	mux.HandleFunc("POST /v1/responses/compact", p.responsesCompact)
	mux.HandleFunc("POST /responses/compact", p.responsesCompact)
}

type responsesRequest struct {
	Model        string            `json:"model"`
	Instructions json.RawMessage   `json:"instructions"`
	Input        []json.RawMessage `json:"input"`
	Tools        json.RawMessage   `json:"tools"`
	Stream       bool              `json:"stream"`
}

// prompt is the cacheable prompt of a Responses request, in the order the
// provider sees it: instructions, tools, then the input items.
func (req responsesRequest) prompt() []byte {
	b, _ := promptOf(req.Input, req.Instructions, req.Tools)
	return b
}

// compactionTrigger says whether the request is a remote compaction: its
// last input item is {"type":"compaction_trigger"}.
func (req responsesRequest) compactionTrigger() bool {
	if len(req.Input) == 0 {
		return false
	}
	var item struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(req.Input[len(req.Input)-1], &item) == nil && item.Type == "compaction_trigger"
}

// lastUserText is the text of the request's last user message.
func (req responsesRequest) lastUserText() string {
	for i := len(req.Input) - 1; i >= 0; i-- {
		var item struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(req.Input[i], &item) != nil || item.Role != "user" {
			continue
		}
		var s strings.Builder
		for _, c := range item.Content {
			s.WriteString(c.Text)
		}
		return s.String()
	}
	return ""
}

// isCodexCompactionPrompt spots Codex's local compaction prompt
// (codex-rs/core/templates/compact/prompt.md: "You are performing a CONTEXT
// CHECKPOINT COMPACTION…").
func isCodexCompactionPrompt(text string) bool {
	return strings.Contains(text, "CONTEXT CHECKPOINT COMPACTION") || strings.Contains(strings.ToLower(text), "handoff summary")
}

// openAICached rounds a shared prefix the way OpenAI's cache reports it:
// nothing below 1,024 tokens, then whole 128-token blocks.
func openAICached(shared int64) int64 {
	if shared < 1024 {
		return 0
	}
	return shared / 128 * 128
}

// accountOpenAI records a Responses call with OpenAI's cache granularity.
func (p *Provider) accountOpenAI(path string, body, prompt []byte, compaction bool, output int64) (int64, int64) {
	tokens, cached := p.account("responses", path, body, prompt, compaction, output)
	cached = openAICached(cached)
	p.mu.Lock()
	p.calls[len(p.calls)-1].Cached = cached
	p.mu.Unlock()
	return tokens, cached
}

func decodeResponsesRequest(w http.ResponseWriter, r *http.Request) (responsesRequest, []byte, bool) {
	var req responsesRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, "bad request body: "+err.Error())
		return req, body, false
	}
	return req, body, true
}

func responsesUsage(tokens, cached, output int64) map[string]any {
	return map[string]any{
		"input_tokens": tokens, "input_tokens_details": map[string]any{"cached_tokens": cached},
		"output_tokens": output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": tokens + output,
	}
}

func (p *Provider) responses(w http.ResponseWriter, r *http.Request) {
	req, body, ok := decodeResponsesRequest(w, r)
	if !ok {
		return
	}
	remote := req.compactionTrigger()
	compaction := remote || isCodexCompactionPrompt(req.lastUserText())
	text := "ok."
	if compaction {
		text = "Summary: the user sent long notes and the assistant acknowledged each of them."
	}
	output := int64(len(text)+3) / 4
	tokens, cached := p.accountOpenAI(r.URL.Path, body, req.prompt(), compaction, output)
	p.log.Info("fake provider: response", "prompt", tokens, "cached", cached, "compaction", compaction, "remote", remote, "stream", req.Stream)

	n := len(p.Calls())
	id := fmt.Sprintf("resp_%d", n)
	message := map[string]any{"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_%d", n), "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	if remote {
		// The summary travels opaque, as OpenAI's does.
		message = map[string]any{"type": "compaction", "id": fmt.Sprintf("cmp_%d", n),
			"encrypted_content": base64.StdEncoding.EncodeToString([]byte(text))}
	}
	completed := map[string]any{"id": id, "object": "response", "status": "completed", "model": req.Model,
		"output": []any{message}, "usage": responsesUsage(tokens, cached, output)}
	if !req.Stream {
		writeJSON(w, completed)
		return
	}
	stream := eventStream(w)
	// Each event's data names its type again, as OpenAI's do.
	send := func(event string, v map[string]any) {
		v["type"] = event
		stream(event, v)
	}
	send("response.created", map[string]any{"response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": req.Model}})
	if !remote {
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"type": "message", "role": "assistant", "id": message["id"], "content": []any{}}})
		send("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": message["id"], "delta": text})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": message})
	send("response.completed", map[string]any{"response": completed})
}

// responsesCompact is the remote compaction endpoint: the history comes
// back as one user message holding the summary.
func (p *Provider) responsesCompact(w http.ResponseWriter, r *http.Request) {
	req, body, ok := decodeResponsesRequest(w, r)
	if !ok {
		return
	}
	summary := "Summary: the user sent long notes and the assistant acknowledged each of them."
	output := int64(len(summary)+3) / 4
	tokens, cached := p.accountOpenAI(r.URL.Path, body, req.prompt(), true, output)
	p.log.Info("fake provider: remote compaction", "prompt", tokens, "cached", cached)
	writeJSON(w, map[string]any{
		"id": fmt.Sprintf("cmp_%d", time.Now().UnixNano()), "object": "response.compaction",
		"output": []any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": summary}}}},
		"usage": responsesUsage(tokens, cached, output),
	})
}
