package all_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/harness/dsh"
	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
	"tollgate/test/shareddata"

	"github.com/klauspost/compress/zstd"
)

// Synthetic logs of every format, written by the tests themselves so a
// clone without ../shared/data still tests the importers.

type synthLog struct {
	name, harness, path string
	data                []byte
}

var synthT0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func stamp(i int) string {
	return synthT0.Add(time.Duration(i) * 7 * time.Second).Format("2006-01-02T15:04:05.000Z")
}

// synthClaude writes a main transcript: streamed snapshots, tool results,
// a sidechain message, a synthetic notice, two folds (auto, manual) each
// followed by its summary line, and nested usage in a progress line.
func synthClaude(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var b bytes.Buffer
	sid := "0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11"
	meta := `"isSidechain":false,"userType":"external","cwd":"/home/u/proj","sessionId":"` + sid + `","version":"2.1.39"`
	n := 0
	ctx := int64(20000)
	b.WriteString(`{"type":"file-history-snapshot","messageId":"x","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}` + "\n")
	msg := func(side bool) {
		n++
		id, req := fmt.Sprintf("msg_%03d", n), fmt.Sprintf("req_%03d", n)
		in, write := int64(1+rng.IntN(3)), int64(100+rng.IntN(3000))
		w1 := int64(0)
		if rng.IntN(3) == 0 {
			w1, write = write, 0
		}
		m := meta
		if side {
			m = strings.Replace(meta, `"isSidechain":false`, `"isSidechain":true`, 1)
		}
		out := int64(1 + rng.IntN(5))
		snaps := 1 + rng.IntN(4)
		for s := 0; s < snaps; s++ {
			if s == snaps-1 {
				out += int64(rng.IntN(900))
			}
			fmt.Fprintf(&b, `{"parentUuid":null,%s,"message":{"model":"claude-opus-4-6","id":"%s","type":"message","role":"assistant","content":[{"type":"text","text":"step %d \"quoted\" usage"}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":%d},"output_tokens":%d}},"requestId":"%s","type":"assistant","uuid":"u-%d-%d","timestamp":"%s"}`+"\n",
				m, id, n, in, write+w1, ctx, write, w1, out, req, n, s, stamp(n))
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, `{"parentUuid":null,%s,"type":"progress","data":{"type":"hook_progress","command":"x"},"timestamp":"%s","uuid":"p-%d-%d"}`+"\n", meta, stamp(n), n, s)
			}
		}
		if !side {
			ctx += in + write + w1 + out
		}
		fmt.Fprintf(&b, `{"parentUuid":null,%s,"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"%s"}]},"uuid":"t-%d","timestamp":"%s","toolUseResult":{"stdout":"{\"usage\":{\"input_tokens\":999}}"}}`+"\n",
			meta, strings.Repeat("result text ", 20+rng.IntN(200)), n, stamp(n))
	}
	boundary := func(trigger string) {
		n++
		fmt.Fprintf(&b, `{"parentUuid":null,"logicalParentUuid":"x",%s,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"%s","uuid":"b-%d","level":"info","compactMetadata":{"trigger":"%s","preTokens":%d}}`+"\n", meta, stamp(n), n, trigger, ctx)
		fmt.Fprintf(&b, `{"parentUuid":"b-%d",%s,"type":"user","message":{"role":"user","content":"This session is being continued. %s"},"isCompactSummary":true,"uuid":"s-%d","timestamp":"%s"}`+"\n", n, meta, strings.Repeat("summary ", 300), n, stamp(n))
		ctx = 20000
	}
	for i := 0; i < 12; i++ {
		msg(false)
	}
	msg(true)
	fmt.Fprintf(&b, `{"parentUuid":null,%s,"message":{"model":"<synthetic>","id":"syn","usage":{"input_tokens":0,"output_tokens":0}},"type":"assistant","uuid":"syn","timestamp":"%s"}`+"\n", meta, stamp(n))
	fmt.Fprintf(&b, `{"parentUuid":null,%s,"type":"progress","data":{"message":{"type":"assistant","message":{"id":"nested","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":40}}},"type":"agent_progress"},"timestamp":"%s","uuid":"np"}`+"\n", meta, stamp(n))
	boundary("auto")
	for i := 0; i < 6; i++ {
		msg(false)
	}
	boundary("manual")
	msg(false)
	msg(false)
	return b.Bytes()
}

// synthClaudeCompact is the summary call's transcript of the first fold.
func synthClaudeCompact() []byte {
	return []byte(`{"parentUuid":null,"isSidechain":true,"sessionId":"0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11","agentId":"acompact-1","type":"user","message":{"role":"user","content":"Your task is to create a detailed summary"},"uuid":"c1","timestamp":"` + stamp(14) + `"}
{"parentUuid":"c1","isSidechain":true,"sessionId":"0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11","agentId":"acompact-1","message":{"model":"claude-opus-4-6","id":"msg_compact","type":"message","role":"assistant","content":[{"type":"text","text":"summary"}],"usage":{"input_tokens":3,"cache_creation_input_tokens":8681,"cache_read_input_tokens":164830,"cache_creation":{"ephemeral_5m_input_tokens":8681,"ephemeral_1h_input_tokens":0},"output_tokens":8}},"requestId":"req_compact","type":"assistant","uuid":"c2","timestamp":"` + stamp(14) + `"}
`)
}

// synthCodex writes a rollout: repeated token_counts, a model change, a
// local compaction (its summary call is the token_count before it), and a
// remote one reported by both its item and its event.
func synthCodex(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"session_meta","payload":{"id":"019bf4b5-0000-7000-8000-00000000abcd","timestamp":"%s","cwd":"/home/u/codex-proj","originator":"codex_cli_rs","cli_version":"0.89.0","model_provider":"openai","base_instructions":{"text":"You are cxlog.Name"}}}`+"\n", stamp(0), stamp(0))
	var total [4]int64 // input, cached, output, total
	ctx := int64(9000)
	i := 0
	turn := func(model string) {
		i++
		fmt.Fprintf(&b, `{"timestamp":"%s","type":"turn_context","payload":{"cwd":"/home/u/codex-proj","model":"%s","effort":"high","user_instructions":"use token_count wisely"}}`+"\n", stamp(i), model)
	}
	tc := func() {
		i++
		in := ctx + int64(rng.IntN(2000))
		cached := in - int64(rng.IntN(1500)) - 1
		out := int64(10 + rng.IntN(400))
		total[0] += in
		total[1] += cached
		total[2] += out
		total[3] += in + out
		ctx = in + out
		line := fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d},"model_context_window":258400},"rate_limits":{}}}`+"\n",
			stamp(i), total[0], total[1], total[2], total[3], in, cached, out, in+out)
		b.WriteString(line)
		fmt.Fprintf(&b, `{"timestamp":"%s","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"token_count is fine"}]}}`+"\n", stamp(i))
		if rng.IntN(2) == 0 {
			b.WriteString(line) // cxlog.Name repeats a token_count without a new request
		}
	}
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{}}}`+"\n", stamp(0))
	turn("gpt-5.2-codex")
	for k := 0; k < 6; k++ {
		tc()
	}
	// local compaction: the summary call's token_count, then the item and its event
	tc()
	i++
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"compacted","payload":{"message":"%s"}}`+"\n", stamp(i), strings.Repeat("summary of the work ", 100))
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"event_msg","payload":{"type":"context_compacted"}}`+"\n", stamp(i))
	ctx = 5000
	turn("gpt-5.4")
	for k := 0; k < 4; k++ {
		tc()
	}
	// remote compaction: no call of its own
	i++
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[]}]}}`+"\n", stamp(i))
	fmt.Fprintf(&b, `{"timestamp":"%s","type":"event_msg","payload":{"type":"context_compacted"}}`+"\n", stamp(i))
	ctx = 4000
	for k := 0; k < 3; k++ {
		tc()
	}
	return b.Bytes()
}

// synthDSH writes a dsh log of format version 1.
func synthDSH(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 3))
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"header","format":"dsh.session","version":1,"session":"s-8f3a","startedAt":"%s","harnessVersion":"0.9.1","provider":"deepseek","model":"deepseek-flash","profile":"","title":"refactor the parser","contextWindow":1048576,"thresholdTokens":838861}`+"\n", stamp(0))
	ctx := int64(13000)
	i := 0
	msg := func(purpose string) {
		i++
		fmt.Fprintf(&b, `{"type":"request/context","at":"%s","requestId":"r-%d","contextWindow":1048576,"thresholdTokens":838861}`+"\n", stamp(i), i)
		fmt.Fprintf(&b, `{"type":"user/message","at":"%s","text":"please fix usage of compaction/summary"}`+"\n", stamp(i))
		in := int64(200 + rng.IntN(3000))
		out := int64(50 + rng.IntN(900))
		p := ""
		if purpose != "" {
			p = `,"purpose":"` + purpose + `"`
		}
		usage := fmt.Sprintf(`{"inputTokens":%d,"cacheReadTokens":%d,"cacheWriteTokens":0,"cacheWrite1hTokens":0,"outputTokens":%d}`, in, ctx, out)
		fmt.Fprintf(&b, `{"type":"assistant/message","at":"%s","id":"m-%d"%s,"usage":%s}`+"\n", stamp(i), i, p, usage)
		if rng.IntN(3) == 0 { // a repeated id is the same request
			fmt.Fprintf(&b, `{"type":"assistant/message","at":"%s","id":"m-%d"%s,"usage":%s}`+"\n", stamp(i), i, p, usage)
		}
		fmt.Fprintf(&b, `{"type":"tool/result","at":"%s","tokens":%d,"text":"%s"}`+"\n", stamp(i), 500, strings.Repeat("out ", 50+rng.IntN(100)))
		if purpose == "" {
			ctx += in + out
		}
	}
	for k := 0; k < 8; k++ {
		msg("")
	}
	msg("subagent")
	i++
	fmt.Fprintf(&b, `{"type":"compaction/prune","at":"%s","id":"p-1","trigger":"pressure","preTokens":%d,"units":3,"shadowedTokens":2500,"fromTokens":4000}`+"\n", stamp(i), ctx)
	fmt.Fprintf(&b, `{"type":"surfaceOp","at":"%s","id":"op-1","op":"replace","kind":"prune","cause":"p-1","units":[{"id":"seq-3","tokens":1200},{"id":"seq-4","tokens":900}],"replacement":{"tokens":100}}`+"\n", stamp(i))
	ctx -= 2500
	msg("")
	i++
	fmt.Fprintf(&b, `{"type":"compaction/summary","at":"%s","id":"c-1","trigger":"manual","preTokens":%d,"summarizedTokens":%d,"retainedTokens":3000,"checkpointTokens":1800,"call":{"id":"m-call-1","model":"deepseek-flash","usage":{"inputTokens":900,"cacheReadTokens":%d,"outputTokens":1800}}}`+"\n", stamp(i), ctx, ctx-16000, ctx-900)
	ctx = 13000 + 1800 + 3000
	msg("")
	i++
	fmt.Fprintf(&b, `{"type":"surfaceOp","at":"%s","id":"op-2","op":"replace","kind":"prune","preTokens":%d,"fromTokens":100,"units":[{"id":"seq-9","tokens":4000}],"replacement":{"tokens":200}}`+"\n", stamp(i), ctx)
	fmt.Fprintf(&b, `{"type":"surfaceOp","at":"%s","id":"op-3","op":"insert","units":[]}`+"\n", stamp(i))
	msg("")
	msg("")
	return b.Bytes()
}

// zstdFrames compresses data as a writer appending one frame per flush
// would: frames of a few lines each, one frame cutting a line in two, and a
// skippable frame in between.
func zstdFrames(t testing.TB, data []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(err)
	}
	defer enc.Close()
	var out []byte
	lines := bytes.SplitAfter(data, []byte("\n"))
	var chunk []byte
	for i, l := range lines {
		chunk = append(chunk, l...)
		if i%3 == 2 || i == len(lines)-1 {
			if i == 5 { // a frame ending mid-line: the next one finishes it
				cut := len(chunk) - len(l)/2
				out = enc.EncodeAll(chunk[:cut], out)
				chunk = append([]byte{}, chunk[cut:]...)
				continue
			}
			out = enc.EncodeAll(chunk, out)
			chunk = chunk[:0]
			if i == 8 {
				out = append(out, 0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c')
			}
		}
	}
	return out
}

func syntheticLogs(t testing.TB) []synthLog {
	dshLog := synthDSH(7)
	return []synthLog{
		{"claude-code", cclog.Name, "0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", synthClaude(5)},
		{"claude-code-compact", cclog.Name, "0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11/subagents/agent-acompact-1.jsonl", synthClaudeCompact()},
		{"codex", cxlog.Name, "rollout-2026-11-30T09-00-00-019bf4b5-0000-7000-8000-00000000abcd.jsonl", synthCodex(6)},
		{"dsh", dsh.Name, "session.jsonl", dshLog},
		{"dsh-zstd", dsh.Name, "session.jsonl.zstd", zstdFrames(t, dshLog)},
	}
}

func writeSynth(t *testing.T, dir string, l synthLog) string {
	path := filepath.Join(dir, l.path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, l.data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSyntheticClaudeCode(t *testing.T) {
	dir := t.TempDir()
	logs := syntheticLogs(t)
	main, compact := writeSynth(t, dir, logs[0]), writeSynth(t, dir, logs[1])
	w := wantClaude(t, main, []string{compact})
	g := parseFiles(t, cclog.Name, main, compact)
	checkSame(t, "synthetic", w, g)
	if len(w.requests) != 22 || len(w.folds) != 2 || w.folds[1].trigger != "manual" {
		t.Fatalf("the synthetic transcript should hold 21+1 requests and two folds: %d, %+v", len(w.requests), w.folds)
	}
	for _, f := range g.folds {
		if !f.CheckpointEstimated || f.CheckpointTokens < 500 {
			t.Errorf("fold %s: checkpoint %d estimated %v", f.ID, f.CheckpointTokens, f.CheckpointEstimated)
		}
	}
	if !g.sessions["claude-code:0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11"] || len(g.sessions) != 1 {
		t.Errorf("sessions %v", g.sessions)
	}
}

func TestSyntheticCodex(t *testing.T) {
	l := syntheticLogs(t)[2]
	path := writeSynth(t, t.TempDir(), l)
	w := wantCodex(t, path)
	g := parseFiles(t, cxlog.Name, path)
	// The token_count before the local compaction is its summary call.
	var compaction []string
	for k, p := range g.purposes {
		if p == importer.PurposeCompaction {
			compaction = append(compaction, k)
		}
	}
	if len(compaction) != 1 {
		t.Fatalf("compaction requests %v, want one", compaction)
	}
	w.purposes[compaction[0]] = importer.PurposeCompaction
	if len(g.folds) != 2 {
		t.Fatalf("%d folds, want 2 (compacted + context_compacted of one compaction are one fold)", len(g.folds))
	}
	// independent expectations for the folds: preTokens is the context of
	// the last conversation request before it, actual cold the uncached
	// input of the first after it
	var reqs []pricing.Usage
	var keys []string
	for _, m := range readLines(t, path) {
		p := obj(m, "payload")
		if m["type"] == "event_msg" && p["type"] == "token_count" && obj(p, "info") != nil {
			lu := obj(obj(p, "info"), "last_token_usage")
			k := fmt.Sprintf("t%d", num(obj(obj(p, "info"), "total_token_usage"), "total_tokens"))
			if len(keys) > 0 && keys[len(keys)-1] == k {
				continue
			}
			keys = append(keys, k)
			reqs = append(reqs, pricing.Usage{Input: num(lu, "input_tokens") - num(lu, "cached_input_tokens"), CacheRead: num(lu, "cached_input_tokens"), Output: num(lu, "output_tokens")})
		}
		if m["type"] == "compacted" {
			// requests so far; for the local one the last is the summary call
			n := len(reqs)
			pre := reqs[n-1]
			if keys[n-1] == compaction[0] {
				pre = reqs[n-2]
			}
			w.folds = append(w.folds, wantFold{trigger: "auto", pre: pre.Prompt() + pre.Output})
		}
	}
	// actual cold: first conversation request after each fold
	var after []int64
	seenFold := 0
	for _, m := range readLines(t, path) {
		if m["type"] == "compacted" {
			seenFold++
			after = append(after, -1)
			continue
		}
		p := obj(m, "payload")
		if seenFold > 0 && after[seenFold-1] < 0 && m["type"] == "event_msg" && p["type"] == "token_count" && obj(p, "info") != nil {
			lu := obj(obj(p, "info"), "last_token_usage")
			after[seenFold-1] = num(lu, "input_tokens") - num(lu, "cached_input_tokens")
		}
	}
	for i := range w.folds {
		c := after[i]
		w.folds[i].actualCold = &c
	}
	checkSame(t, "codex", w, g)
	if g.folds[0].Summary == nil || g.folds[1].Summary != nil || !g.folds[0].CheckpointEstimated {
		t.Errorf("local fold carries its call, remote none: %+v / %+v", g.folds[0], g.folds[1])
	}
}

func wantDSH(t testing.TB, data []byte) want {
	w := want{requests: map[string]pricing.Usage{}, purposes: map[string]string{}}
	var open []int
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatal(err)
		}
		usage := func(u map[string]any) pricing.Usage {
			return pricing.Usage{Input: num(u, "inputTokens"), CacheRead: num(u, "cacheReadTokens"), CacheWrite: num(u, "cacheWriteTokens"), CacheWrite1h: num(u, "cacheWrite1hTokens"), Output: num(u, "outputTokens")}
		}
		switch m["type"] {
		case "assistant/message":
			id := m["id"].(string)
			u := usage(obj(m, "usage"))
			_, seen := w.requests[id]
			w.requests[id] = u
			p, _ := m["purpose"].(string)
			if p == "" {
				p = importer.PurposeConversation
			}
			w.purposes[id] = p
			if !seen && p == importer.PurposeConversation {
				for _, i := range open {
					c := u.Uncached()
					w.folds[i].actualCold = &c
				}
				open = nil
			}
		case "compaction/summary", "compaction/prune":
			trig := "auto"
			if m["trigger"] == "manual" {
				trig = "manual"
			}
			if call := obj(m, "call"); call != nil {
				w.requests[call["id"].(string)] = usage(obj(call, "usage"))
				w.purposes[call["id"].(string)] = importer.PurposeCompaction
			}
			w.folds = append(w.folds, wantFold{trigger: trig, pre: num(m, "preTokens")})
			open = append(open, len(w.folds)-1)
		case "surfaceOp":
			if m["op"] == "replace" && m["cause"] == nil {
				w.folds = append(w.folds, wantFold{trigger: "auto", pre: num(m, "preTokens")})
				open = append(open, len(w.folds)-1)
			}
		}
	}
	return w
}

func TestSyntheticDSH(t *testing.T) {
	for _, l := range syntheticLogs(t)[3:] {
		t.Run(l.name, func(t *testing.T) {
			path := writeSynth(t, t.TempDir(), l)
			w := wantDSH(t, synthDSH(7))
			g := parseFiles(t, dsh.Name, path)
			checkSame(t, l.name, w, g)
			if !g.sessions["dsh:s-8f3a"] {
				t.Errorf("sessions %v", g.sessions)
			}
			if len(g.folds) != 3 {
				t.Fatalf("folds %d", len(g.folds))
			}
			prune, summary, op := g.folds[0], g.folds[1], g.folds[2]
			if prune.Kind != importer.KindPrune || prune.ShadowedTokens != 2500+2000 || prune.Units != 3+2 || ptr(prune.FromTokens) != int64(4000) {
				t.Errorf("prune with its surfaceOp: %+v", prune)
			}
			if summary.Kind != importer.KindSummary || summary.CheckpointTokens != 1800 || summary.RetainedTokens != 3000 || summary.Summary == nil || summary.Summary.Output != 1800 {
				t.Errorf("summary: %+v", summary)
			}
			if op.Kind != importer.KindPrune || op.ShadowedTokens != 3800 || op.Units != 1 {
				t.Errorf("surfaceOp fold: %+v", op)
			}
		})
	}
}

func TestZstdIncompleteFrameWaits(t *testing.T) {
	plain := synthDSH(7)
	z := zstdFrames(t, plain)
	whole, err := importer.Parse(bytes.NewReader(z), importer.Options{Harness: dsh.Name, Path: "session.jsonl.zstd"})
	if err != nil || whole.Consumed != int64(len(z)) {
		t.Fatalf("whole: %v, consumed %d of %d", err, whole.Consumed, len(z))
	}
	// Every prefix parses without error and stops at a frame boundary.
	for cut := 0; cut < len(z); cut += 7 {
		res, err := importer.Parse(bytes.NewReader(z[:cut]), importer.Options{Harness: dsh.Name, Path: "session.jsonl.zstd"})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if res.Consumed > int64(cut) {
			t.Fatalf("cut %d: consumed %d", cut, res.Consumed)
		}
		if res.Consumed > 0 {
			if _, _, err := jsonl.FrameSize(z[res.Consumed:]); err != nil && cut < len(z) && res.Consumed < int64(len(z)) && !errors.Is(err, jsonl.ErrShortFrame) {
				t.Fatalf("cut %d: offset %d is not at a frame: %v", cut, res.Consumed, err)
			}
		}
	}
	// Garbage is an error naming the file.
	_, err = importer.Parse(bytes.NewReader([]byte("not zstd at all")), importer.Options{Harness: dsh.Name, Path: "s.jsonl.zstd"})
	if err == nil || !strings.Contains(err.Error(), "s.jsonl.zstd") {
		t.Fatalf("err = %v", err)
	}
}

// startedByAt parses files and maps each new request's first-line time
// (UTC, to the second) to its thread and what started it.
func startedByAt(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: path, AtEOF: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			if q := r.Request; q != nil {
				out[q.At.UTC().Format(time.TimeOnly)+" "+q.Thread] = q.StartedBy
			}
		}
	}
	return out
}

// TestStartedByRealTranscripts: the requests the issue names, read from the
// shared transcripts themselves.
func TestStartedByRealTranscripts(t *testing.T) {
	dir := filepath.Join(shareddata.Dir(t), "claude-code")
	got := startedByAt(t, filepath.Join(dir, "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"))
	for at, want := range map[string]string{
		"20:19:04 ": importer.StartedByPrompt,       // "continue" after 4 h 11 min
		"20:30:31 ": importer.StartedByCompaction,   // the first request after the fold
		"20:58:58 ": importer.StartedByAnswer,       // the AskUserQuestion answer after 19 min
		"21:03:30 ": importer.StartedByNotification, // a background command finished
	} {
		if got[at] != want {
			t.Errorf("4d5611e5 %s started by %q, want %q", at, got[at], want)
		}
	}
	sub, _ := filepath.Glob(filepath.Join(dir, "258c7280-ae70-4798-800f-63464d01a85d", "subagents", "*.jsonl"))
	got = startedByAt(t, append(sub, filepath.Join(dir, "258c7280-ae70-4798-800f-63464d01a85d.jsonl"))...)
	for at, want := range map[string]string{
		"20:51:16 ": importer.StartedByNotification, // with an interrupt and a tool result before it: the notification names it
		"21:18:43 ": importer.StartedByCompaction,
		"21:36:44 ": importer.StartedByNotification,
	} {
		if got[at] != want {
			t.Errorf("258c7280 %s started by %q, want %q", at, got[at], want)
		}
	}
	starts, kinds := 0, map[string]int{}
	for k, v := range got {
		kinds[v]++
		if strings.HasSuffix(k, " agent-a881341") && v == importer.StartedByThreadStart {
			starts++
		}
		if strings.HasSuffix(k, " ") && v == importer.StartedByThreadStart {
			t.Errorf("a main-thread request %s is a thread start", k)
		}
	}
	if starts != 1 {
		t.Errorf("subagent a881341 has %d thread starts, want 1 (%v)", starts, kinds)
	}
	if kinds[importer.StartedByToolResult] < 100 {
		t.Errorf("only %d tool-result requests: %v", kinds[importer.StartedByToolResult], kinds)
	}
}

// TestStartedByEveryKind: one synthetic transcript with each kind of user
// line, read in one pass and line by line (the state carries it across).
func TestStartedByEveryKind(t *testing.T) {
	head := `{"parentUuid":null,"isSidechain":false,"cwd":"/p/x","sessionId":"s","type":"user",`
	user := func(content string, extra string) string {
		return head + `"message":{"role":"user","content":` + content + `}` + extra + `,"uuid":"u","timestamp":"2026-02-12T20:00:00Z"}`
	}
	n := 0
	asst := func(extra string) string {
		n++
		return `{"parentUuid":"p","isSidechain":false,"message":{"id":"m` + strconv.Itoa(n) + `","model":"claude-opus-4-6","role":"assistant","content":[` + extra +
			`],"usage":{"input_tokens":3,"cache_read_input_tokens":100,"output_tokens":1}},"requestId":"r` + strconv.Itoa(n) + `","type":"assistant","uuid":"a","timestamp":"2026-02-12T20:00:0` + strconv.Itoa(n%10) + `Z"}`
	}
	lines := []string{
		user(`"hello"`, ""), asst(""),
		user(`[{"tool_use_id":"t1","type":"tool_result","content":"<task-notification> in a file"}]`, ""), asst(`{"type":"tool_use","id":"q","name":"AskUserQuestion","input":{}}`),
		user(`[{"tool_use_id":"q","type":"tool_result","content":"User has answered your questions: yes"}]`, ""), asst(""),
		user(`"<task-notification>\n<task-id>b1</task-id>"`, ""), asst(""),
		user(`[{"type":"text","text":"[Request interrupted by user for tool use]"}]`, ""), asst(""),
		user(`"<system-reminder>PostToolUse hook additional context</system-reminder>"`, `,"isMeta":true`), asst(""),
		user(`"<command-name>/model</command-name>"`, ""), asst(""),
		`{"type":"system","subtype":"compact_boundary","uuid":"b","timestamp":"2026-02-12T20:00:09Z","compactMetadata":{"trigger":"auto","preTokens":9}}`,
		user(`"This session is being continued"`, `,"isCompactSummary":true`), asst(""),
		user(`[{"tool_use_id":"t2","type":"tool_result","content":"ok"}]`, ""), user(`"<task-notification>x"`, ""), asst(""),
		asst(""),
	}
	want := []string{importer.StartedByPrompt, importer.StartedByToolResult, importer.StartedByAnswer, importer.StartedByNotification, importer.StartedByInterrupt,
		importer.StartedByHook, importer.StartedByMeta, importer.StartedByCompaction, importer.StartedByNotification, ""}
	data := []byte(strings.Join(lines, "\n") + "\n")
	check := func(name string, g []string) {
		if strings.Join(g, ",") != strings.Join(want, ",") {
			t.Errorf("%s:\n got %q\nwant %q", name, g, want)
		}
	}
	path := "/p/11111111-2222-3333-4444-555555555555.jsonl"
	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	g := startedBys(res)
	check("one pass", g)
	g = nil
	var state []byte
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		res, err := importer.Parse(strings.NewReader(l), importer.Options{Harness: cclog.Name, Path: path, State: state})
		if err != nil {
			t.Fatal(err)
		}
		state = res.State
		g = append(g, startedBys(res)...)
	}
	check("line by line", g)
	// A subagent's file is its own thread, its first request a start.
	res, err = importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: "/p/11111111-2222-3333-4444-555555555555/subagents/agent-a1.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Records[0].Request; q.Thread != "agent-a1" || q.StartedBy != importer.StartedByThreadStart {
		t.Errorf("subagent's first request: thread %q started by %q", q.Thread, q.StartedBy)
	}
}

// TestStartedByCodex: the shared rollout's requests, each after a prompt or
// a tool result; a synthetic rollout's request after its compaction.
func TestStartedByCodex(t *testing.T) {
	path := filepath.Join(shareddata.Dir(t), "codex", "crud.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cxlog.Name, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	got := startedBys(res)
	// user_message, then four tool results (function or custom tool calls).
	if want := []string{importer.StartedByPrompt, importer.StartedByToolResult, importer.StartedByToolResult, importer.StartedByToolResult, importer.StartedByToolResult}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("started by %q, want %q", got, want)
	}
	res, err = importer.Parse(bytes.NewReader(synthCodex(1)), importer.Options{Harness: cxlog.Name, Path: "rollout-x.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	after := false
	for _, r := range res.Records {
		switch {
		case r.Fold != nil:
			after = true
		case r.Request != nil && after:
			if r.Request.StartedBy != importer.StartedByCompaction {
				t.Errorf("the first request after a compaction is started by %q", r.Request.StartedBy)
			}
			after = false
		}
	}
}

// TestStartedByDSH: the synthetic dsh log's conversation requests follow a
// user message and a tool result (the prompt names them), the first after
// its summary says so.
func TestStartedByDSH(t *testing.T) {
	res, err := importer.Parse(bytes.NewReader(synthDSH(1)), importer.Options{Harness: dsh.Name, Path: "s.jsonl", AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Records {
		if q := r.Request; q != nil && q.Purpose == importer.PurposeConversation {
			got = append(got, q.StartedBy)
		}
	}
	want := []string{importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt, importer.StartedByPrompt,
		importer.StartedByPrompt, importer.StartedByCompaction, importer.StartedByPrompt, importer.StartedByPrompt}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("started by\n%q, want\n%q", got, want)
	}
}

// startedBys is what started each request of a pass, in order.
func startedBys(res *importer.Result) []string {
	var out []string
	for _, r := range res.Records {
		if r.Request != nil {
			out = append(out, r.Request.StartedBy)
		}
	}
	return out
}
