// Package harness holds the end-to-end tests that drive the real harness
// programs (Claude Code, DeepSeek-Reasonix, Codex CLI) against tollgate, and the fake
// model provider they talk to.
//
// The fake provider serves an OpenAI-style streaming
// POST /v1/chat/completions (ending with a usage chunk and [DONE]) and an
// Anthropic-style SSE POST /v1/messages (with ?beta=true tolerated) plus
// /v1/messages/count_tokens. Token counts are honest: a request's prompt
// tokens are its serialized messages, system prompt and tools at 4 bytes a
// token, and the cached part is the longest prefix it shares with an earlier
// request, because both harnesses decide when to compact from the usage the
// provider reports.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Call is one model request the fake provider served.
type Call struct {
	API        string // "openai" | "anthropic"
	Path       string
	At         time.Time
	Compaction bool // the request asks for a summary of the conversation
	Prompt     int64
	Cached     int64
	Output     int64
	Body       []byte
}

// Provider is the fake model provider.
type Provider struct {
	URL string
	// DumpDir, when set, receives every request body as NNN-api.json
	// (for looking at what a harness sends).
	DumpDir string

	ln  net.Listener
	srv *http.Server
	log *slog.Logger

	mu       sync.Mutex
	calls    []Call
	prefixes [][]byte // every earlier prompt, for the cache figures
}

// StartProvider serves the fake provider on 127.0.0.1 (a free port).
func StartProvider(log *slog.Logger) (*Provider, error) {
	return startProvider(log, "fake provider", `{"error":{"message":"not found"}}`, func(p *Provider, mux *http.ServeMux) {
		mux.HandleFunc("POST /v1/chat/completions", p.chatCompletions)
		mux.HandleFunc("POST /chat/completions", p.chatCompletions)
		mux.HandleFunc("GET /v1/models", p.models)
		mux.HandleFunc("GET /models", p.models)
		mux.HandleFunc("POST /v1/messages", p.messages)
		mux.HandleFunc("POST /v1/messages/count_tokens", p.countTokens)
		p.responsesRoutes(mux) // fake_responses.go: Codex's Responses API
	})
}

// startProvider serves a fake provider on 127.0.0.1 (a free port) with the
// routes route adds; any other request is logged under name and answered
// 404 with notFound, the API's own error body.
func startProvider(log *slog.Logger, name, notFound string, route func(*Provider, *http.ServeMux)) (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := &Provider{URL: "http://" + ln.Addr().String(), ln: ln, log: log}
	mux := http.NewServeMux()
	route(p, mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.log.Info(name+": unhandled", "method", r.Method, "path", r.URL.Path)
		http.Error(w, notFound, http.StatusNotFound)
	})
	p.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() error { return p.srv.Close() }

// Calls returns every request served so far.
func (p *Provider) Calls() []Call {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Call(nil), p.calls...)
}

// Compactions counts the summary requests served so far.
func (p *Provider) Compactions() int {
	n := 0
	for _, c := range p.Calls() {
		if c.Compaction {
			n++
		}
	}
	return n
}

// account records a call whose prompt is the given bytes and returns its
// prompt and cached token counts: cached is the longest prefix shared with
// an earlier prompt, at 4 bytes a token.
func (p *Provider) account(api, path string, body, prompt []byte, compaction bool, output int64) (int64, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	shared := 0
	for _, prev := range p.prefixes {
		n := min(len(prev), len(prompt))
		i := 0
		for i < n && prev[i] == prompt[i] {
			i++
		}
		shared = max(shared, i)
	}
	p.prefixes = append(p.prefixes, prompt)
	tokens := int64(len(prompt)+3) / 4
	cached := int64(shared) / 4
	if cached < 1024/4 { // providers cache nothing below a minimum prefix
		cached = 0
	}
	if p.DumpDir != "" {
		os.WriteFile(filepath.Join(p.DumpDir, fmt.Sprintf("%03d-%s.json", len(p.calls)+1, api)), body, 0o644)
	}
	p.calls = append(p.calls, Call{API: api, Path: path, At: time.Now(), Compaction: compaction, Prompt: tokens, Cached: cached, Output: output, Body: body})
	return tokens, cached
}

// isSummaryRequest spots a harness asking for a summary of its conversation
// in the text of the request's last message.
func isSummaryRequest(last string) bool {
	l := strings.ToLower(last)
	return strings.Contains(l, "summary") || strings.Contains(l, "summarize") || strings.Contains(l, "summarise")
}

// readRequest reads a request's body and decodes it into req. It answers
// 400 itself, with badJSON (the API's own error body) when the body is not
// the JSON expected, and then reports false.
func readRequest(w http.ResponseWriter, r *http.Request, req any, badJSON string) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	if err := json.Unmarshal(body, req); err != nil {
		http.Error(w, badJSON, http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// promptOf is a request's cacheable prompt in the order its provider sees
// it: the head parts (tools, system prompt, as the API orders them), then
// the messages. last is the text of the last message, where a harness's
// summary request says what it is.
func promptOf(messages []json.RawMessage, head ...json.RawMessage) (prompt []byte, last string) {
	var b bytes.Buffer
	for _, h := range head {
		b.Write(h)
	}
	for _, m := range messages {
		b.Write(m)
	}
	if n := len(messages); n > 0 {
		last = string(messages[n-1])
	}
	return b.Bytes(), last
}

// writeJSON answers v as a JSON document.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// eventStream starts a server-sent event stream and returns what sends one
// event: its name on an event: line (none when event is ""), v as the JSON
// of its data: line, flushed at once as a streaming provider's are.
func eventStream(w http.ResponseWriter) func(event string, v any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	return func(event string, v any) {
		b, _ := json.Marshal(v)
		if event != "" {
			fmt.Fprintf(w, "event: %s\n", event)
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

// ---- OpenAI ----

type chatRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
}

func (p *Provider) models(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"tollgate-test"}]}`)
}

func (p *Provider) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, ok := readRequest(w, r, &req, `{"error":{"message":"bad json"}}`)
	if !ok {
		return
	}
	// The cacheable prompt: tools first, then the messages in order.
	prompt, last := promptOf(req.Messages, req.Tools)
	compaction := isSummaryRequest(last)
	text := "ok."
	if compaction {
		text = "Summary: the user sent long prompts and the assistant acknowledged them."
	}
	output := int64(len(text)+3) / 4
	tokens, cached := p.account("openai", r.URL.Path, body, prompt, compaction, output)
	p.log.Info("fake provider: chat completion", "prompt", tokens, "cached", cached, "compaction", compaction, "stream", req.Stream)
	usage := map[string]any{"prompt_tokens": tokens, "completion_tokens": output, "total_tokens": tokens + output,
		"prompt_tokens_details": map[string]any{"cached_tokens": cached}, "prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": tokens - cached}
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
			"usage":   usage,
		})
		return
	}
	send := eventStream(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	send("", chunk(map[string]any{"content": text}, nil))
	send("", chunk(map[string]any{}, "stop"))
	send("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model, "choices": []any{}, "usage": usage})
	io.WriteString(w, "data: [DONE]\n\n")
}

// ---- Anthropic ----

type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	System   json.RawMessage   `json:"system"`
	Tools    json.RawMessage   `json:"tools"`
	Messages []json.RawMessage `json:"messages"`
}

// anthropicPrompt is the cacheable prompt of a Messages request (tools,
// system prompt, messages) and the text of its last message.
func anthropicPrompt(req messagesRequest) ([]byte, string) {
	return promptOf(req.Messages, req.Tools, req.System)
}

func (p *Provider) countTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req messagesRequest
	json.Unmarshal(body, &req)
	prompt, _ := anthropicPrompt(req)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"input_tokens":%d}`, (len(prompt)+3)/4)
}

func (p *Provider) messages(w http.ResponseWriter, r *http.Request) {
	var req messagesRequest
	body, ok := readRequest(w, r, &req, `{"type":"error","error":{"type":"invalid_request_error","message":"bad json"}}`)
	if !ok {
		return
	}
	prompt, last := anthropicPrompt(req)
	compaction := isSummaryRequest(last) && strings.Contains(strings.ToLower(last), "conversation")
	if !compaction && strings.Contains(last, SubagentMarker) {
		p.agentCall(w, req, body, prompt)
		return
	}
	text := "ok."
	if compaction {
		text = "<analysis>The user sent prompts.</analysis>\n<summary>1. Primary Request: the user sent long prompts; the assistant acknowledged each.</summary>"
	} else if strings.Contains(strings.ToLower(last), "title") && strings.Contains(strings.ToLower(last), "json") {
		text = `{"title":"Test session"}`
	}
	output := int64(len(text)+3) / 4
	tokens, cached := p.account("anthropic", r.URL.Path, body, prompt, compaction, output)
	p.log.Info("fake provider: messages", "prompt", tokens, "cached", cached, "compaction", compaction, "stream", req.Stream, "model", req.Model)
	anthropicAnswer(w, req, anthropicBlock{
		whole: map[string]any{"type": "text", "text": text},
		start: map[string]any{"type": "text", "text": ""},
		delta: map[string]any{"type": "text_delta", "text": text},
		stop:  "end_turn",
	}, tokens, cached, output)
}

// SubagentMarker in a prompt makes the Anthropic fake answer with a call of
// Claude Code's Agent tool (a general-purpose subagent told to reply), so
// the session gets a subagent's transcript; the subagent's own request and
// the turn's next one are answered "ok.".
const SubagentMarker = "[tollgate-test: run a subagent]"

// agentCall answers with one tool_use block calling the Agent tool.
func (p *Provider) agentCall(w http.ResponseWriter, req messagesRequest, body, prompt []byte) {
	input, _ := json.Marshal(map[string]any{"description": "Acknowledge the note", "prompt": "Reply with the word ok.",
		"subagent_type": "general-purpose", "run_in_background": false})
	output := int64(len(input)+3) / 4
	tokens, cached := p.account("anthropic", "/v1/messages", body, prompt, false, output)
	p.log.Info("fake provider: messages (Agent tool call)", "prompt", tokens, "cached", cached, "stream", req.Stream, "model", req.Model)
	toolID := fmt.Sprintf("toolu_fake%d", time.Now().UnixNano())
	anthropicAnswer(w, req, anthropicBlock{
		whole: map[string]any{"type": "tool_use", "id": toolID, "name": "Agent", "input": json.RawMessage(input)},
		start: map[string]any{"type": "tool_use", "id": toolID, "name": "Agent", "input": map[string]any{}},
		delta: map[string]any{"type": "input_json_delta", "partial_json": string(input)},
		stop:  "tool_use",
	}, tokens, cached, output)
}

// anthropicBlock is the one content block of an answer: whole as a
// message's content holds it, start and delta as a stream opens and fills
// it, and the stop reason it ends the message with.
type anthropicBlock struct {
	whole, start, delta map[string]any
	stop                string
}

// anthropicAnswer answers a Messages request with one assistant message
// holding block: a JSON message, or when the request streams, Anthropic's
// event sequence (message_start, the block's start, delta and stop,
// message_delta, message_stop).
func anthropicAnswer(w http.ResponseWriter, req messagesRequest, block anthropicBlock, tokens, cached, output int64) {
	uncached := tokens - cached
	model := req.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	// Anthropic's input_tokens exclude the cache: the uncached part is
	// written to the cache (Claude Code marks its prompt cacheable).
	usage := func(output int64) map[string]any {
		return map[string]any{"input_tokens": 0, "cache_read_input_tokens": cached, "cache_creation_input_tokens": uncached,
			"cache_creation": map[string]any{"ephemeral_5m_input_tokens": uncached, "ephemeral_1h_input_tokens": 0}, "output_tokens": output}
	}
	msgID := fmt.Sprintf("msg_fake%d", time.Now().UnixNano())
	if !req.Stream {
		writeJSON(w, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content":     []any{block.whole},
			"stop_reason": block.stop, "stop_sequence": nil, "usage": usage(output),
		})
		return
	}
	send := eventStream(w)
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(1)}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block.start})
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": block.delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": block.stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": output}})
	send("message_stop", map[string]any{"type": "message_stop"})
}
