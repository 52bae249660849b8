// Package testcorpus writes synthetic Claude Code transcripts shaped like
// real ones — streamed assistant snapshots, large tool results, progress
// lines (some carrying a subagent's nested usage), subagent and compaction
// transcripts, compact boundaries — for the import benchmarks. It is for
// tests and benchmarks only; the corpus is generated where it is needed and
// never committed.
package testcorpus

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options size a corpus.
type Options struct {
	// Bytes is the corpus size to reach (the last session may overshoot by
	// one session).
	Bytes int64
	// SessionBytes is the size of one session's main transcript (default 3 MB,
	// about the real sessions in shared/data).
	SessionBytes int64
	Seed         uint64
}

// Stats describes a written corpus.
type Stats struct {
	Bytes    int64
	Files    int
	Sessions int
	// Requests counts distinct billed messages (main, subagent and
	// compaction), Folds the compact boundaries.
	Requests int
	Folds    int
}

// ClaudeCode writes a corpus under dir laid out as Claude Code does:
// dir/projects/<project>/<session>.jsonl and
// dir/projects/<project>/<session>/subagents/agent-*.jsonl, so
// CLAUDE_CONFIG_DIR=dir points ccusage at the same files.
func ClaudeCode(dir string, opts Options) (Stats, error) {
	if opts.SessionBytes <= 0 {
		opts.SessionBytes = 3 << 20
	}
	g := &gen{rng: rand.New(rand.NewPCG(opts.Seed, 0x7011ea7e)), dir: filepath.Join(dir, "projects", "-home-user-work-bench")}
	g.blobs()
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return g.st, err
	}
	for g.st.Bytes < opts.Bytes {
		if err := g.session(opts.SessionBytes); err != nil {
			return g.st, err
		}
	}
	return g.st, nil
}

type gen struct {
	rng   *rand.Rand
	dir   string
	st    Stats
	n     uint64 // id counter
	texts [][]byte
}

// blobs prepares escaped text of many sizes, so writing is fast.
func (g *gen) blobs() {
	words := strings.Fields(`func return if err nil the cache prefix token context window request session fold summary
		import package storage pricing quote surface envelope unit prune checkpoint "quoted" path/to/file.go line
		error: want got {"key": "value"} \t tab tests pass fail build make go vet race`)
	for size := 96; size <= 48<<10; size = size * 5 / 4 {
		var b strings.Builder
		for b.Len() < size {
			w := words[g.rng.IntN(len(words))]
			b.WriteString(w)
			if g.rng.IntN(12) == 0 {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
		}
		q := strconv.Quote(b.String())
		g.texts = append(g.texts, []byte(q[1:len(q)-1]))
	}
}

// text returns escaped text of roughly n bytes.
func (g *gen) text(n int) []byte {
	for _, t := range g.texts {
		if len(t) >= n {
			return t
		}
	}
	return g.texts[len(g.texts)-1]
}

func (g *gen) id(prefix string) string {
	g.n++
	return prefix + strconv.FormatUint(g.n*2654435761%1e12, 36) + strconv.FormatUint(g.n, 36)
}

func (g *gen) uuid() string {
	g.n++
	a, b := g.rng.Uint64(), g.n
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, uint16(b>>48)&0xfff, b&0xffffffffffff)
}

type file struct {
	f     *os.File
	w     *bufio.Writer
	n     int64
	stats *Stats
}

func (g *gen) create(path string) (*file, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	g.st.Files++
	return &file{f: f, w: bufio.NewWriterSize(f, 1<<20), stats: &g.st}, nil
}

func (f *file) line(parts ...[]byte) {
	for _, p := range parts {
		f.w.Write(p)
		f.n += int64(len(p))
	}
	f.w.WriteByte('\n')
	f.n++
}

func (f *file) close() error {
	f.stats.Bytes += f.n
	if err := f.w.Flush(); err != nil {
		f.f.Close()
		return err
	}
	return f.f.Close()
}

// session writes one main transcript of about size bytes and its subagents.
func (g *gen) session(size int64) error {
	sid := g.uuid()
	g.st.Sessions++
	main, err := g.create(filepath.Join(g.dir, sid+".jsonl"))
	if err != nil {
		return err
	}
	var sub *file
	meta := `"isSidechain":false,"userType":"external","cwd":"/home/user/work/bench","sessionId":"` + sid + `","version":"2.1.39","gitBranch":"main","slug":"quiet-bench-run"`
	ts := int64(1_770_900_000_000) + int64(g.rng.IntN(1e9))
	stamp := func() []byte {
		ts += int64(500 + g.rng.IntN(4000))
		return []byte(`"timestamp":"` + msTime(ts) + `"`)
	}
	for i := 0; i < 2; i++ {
		u := g.uuid()
		main.line([]byte(`{"type":"file-history-snapshot","messageId":"` + u + `","snapshot":{"messageId":"` + u + `","trackedFileBackups":{},"timestamp":"` + msTime(ts) + `"},"isSnapshotUpdate":false}`))
	}
	const envelope = 21478
	ctx := int64(envelope)
	parent := "null"
	hook := func(f *file, m string) {
		u := g.uuid()
		f.line([]byte(`{"parentUuid":`+parent+`,`+m+`,"type":"progress","data":{"type":"hook_progress","hookEvent":"PostToolUse","hookName":"PostToolUse:Edit","command":"${CLAUDE_PLUGIN_ROOT}/hooks/check.sh"},"parentToolUseID":"toolu_`+u[:8]+`","toolUseID":"toolu_`+u[:8]+`",`), stamp(), []byte(`,"uuid":"`+u+`"}`))
		parent = `"` + u + `"`
	}
	assistant := func(f *file, m, model string, in, read, write, out int64, block string, body []byte, req, msg string) {
		u := g.uuid()
		usage := fmt.Sprintf(`{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation":{"ephemeral_5m_input_tokens":%d,"ephemeral_1h_input_tokens":0},"output_tokens":%d,"service_tier":"standard","inference_geo":"global"}`, in, write, read, write, out)
		var content []byte
		switch block {
		case "tool_use":
			content = append(append([]byte(`[{"type":"tool_use","id":"toolu_`+u[:12]+`","name":"Bash","input":{"command":"`), body...), `","description":"run it"}}]`...)
		case "thinking":
			content = append(append([]byte(`[{"type":"thinking","thinking":"`), body...), `","signature":"EsYBCkYICBgCKkDx"}]`...)
		default:
			content = append(append([]byte(`[{"type":"text","text":"`), body...), `"}]`...)
		}
		f.line([]byte(`{"parentUuid":`+parent+`,`+m+`,"message":{"model":"`+model+`","id":"`+msg+`","type":"message","role":"assistant","content":`), content,
			[]byte(`,"stop_reason":null,"stop_sequence":null,"usage":`+usage+`},"requestId":"`+req+`","type":"assistant","uuid":"`+u+`",`), stamp(), []byte(`}`))
		parent = `"` + u + `"`
	}
	user := func(f *file, m string, body []byte, toolResult bool) {
		u := g.uuid()
		if toolResult {
			f.line([]byte(`{"parentUuid":`+parent+`,`+m+`,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_`+u[:12]+`","type":"tool_result","content":"`), body,
				[]byte(`","is_error":false}]},"uuid":"`+u+`",`), stamp(), []byte(`,"toolUseResult":{"stdout":"`), body[:len(body)/3], []byte(`","stderr":"","interrupted":false}}`))
		} else {
			f.line([]byte(`{"parentUuid":`+parent+`,`+m+`,"type":"user","message":{"role":"user","content":"`), body, []byte(`"},"uuid":"`+u+`",`), stamp(), []byte(`}`))
		}
		parent = `"` + u + `"`
	}
	// one billed message, streamed as 1–4 snapshot lines
	message := func(f *file, m, model string, isMain bool) {
		msg, req := g.id("msg_01"), g.id("req_011C")
		g.st.Requests++
		write := int64(300 + g.rng.IntN(6000))
		in := int64(1 + g.rng.IntN(3))
		read := ctx
		if !isMain {
			read = int64(g.rng.IntN(40000))
		}
		blocks := []string{"text", "tool_use"}
		if g.rng.IntN(3) == 0 {
			blocks = []string{"thinking", "text", "tool_use"}
		}
		if g.rng.IntN(4) == 0 {
			blocks = append(blocks, "tool_use")
		}
		out := int64(1 + g.rng.IntN(12))
		for i, b := range blocks {
			if i == len(blocks)-1 {
				out += int64(100 + g.rng.IntN(1500))
			}
			assistant(f, m, model, in, read, write, out, b, g.text(200+g.rng.IntN(1800)), req, msg)
			if i < len(blocks)-1 && g.rng.IntN(2) == 0 {
				hook(f, m)
			}
		}
		if isMain {
			ctx += write + in + out/2
		}
	}
	for main.n < size {
		if g.rng.IntN(8) == 0 {
			user(main, meta, g.text(100+g.rng.IntN(1500)), false)
		}
		message(main, meta, "claude-opus-4-6", true)
		for k := g.rng.IntN(5); k > 0; k-- {
			u := g.uuid()
			main.line([]byte(`{"parentUuid":`+parent+`,`+meta+`,"type":"progress","data":{"type":"bash_progress","output":"`), g.text(100+g.rng.IntN(600)),
				[]byte(`","fullOutput":"","elapsedTimeSeconds":3,"totalLines":12},"toolUseID":"bash-progress-`+u[:6]+`","parentToolUseID":"toolu_`+u[:12]+`",`), stamp(), []byte(`,"uuid":"`+u+`"}`))
		}
		if g.rng.IntN(40) == 0 {
			// A Task subagent: its messages in subagents/agent-*.jsonl, echoed
			// as agent_progress lines (with nested usage) in the main file.
			if sub == nil {
				sub, err = g.create(filepath.Join(g.dir, sid, "subagents", "agent-a"+g.uuid()[:6]+".jsonl"))
				if err != nil {
					return err
				}
			}
			sm := `"isSidechain":true,"userType":"external","cwd":"/home/user/work/bench","sessionId":"` + sid + `","version":"2.1.39","gitBranch":"main","agentId":"a1b2c3d"`
			saved := parent
			parent = "null"
			user(sub, sm, g.text(300), false)
			for k := 1 + g.rng.IntN(6); k > 0; k-- {
				message(sub, sm, "claude-sonnet-4-5-20250929", false)
				user(sub, sm, g.text(500+g.rng.IntN(8000)), true)
				u := g.uuid()
				main.line([]byte(`{"parentUuid":`+saved+`,`+meta+`,"type":"progress","data":{"message":{"type":"assistant","message":{"model":"claude-sonnet-4-5-20250929","id":"msg_nested`+u[:8]+`","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_x","name":"Read","input":{"file_path":"/home/user/work/bench/x.go"}}],"usage":{"input_tokens":3,"cache_creation_input_tokens":100,"cache_read_input_tokens":12000,"output_tokens":40}},"requestId":"req_nested","uuid":"`+u+`","timestamp":"`+msTime(ts)+`"},"type":"agent_progress","prompt":"","agentId":"a1b2c3d"},"toolUseID":"agent_msg_x","parentToolUseID":"toolu_y",`), stamp(), []byte(`,"uuid":"`+u+`"}`))
			}
			parent = saved
		}
		user(main, meta, g.text(300+g.rng.IntN(12000)), true)
		if ctx > 165000 {
			// Automatic compaction: the summary call, the boundary, the summary.
			g.st.Folds++
			cf, err := g.create(filepath.Join(g.dir, sid, "subagents", fmt.Sprintf("agent-acompact-%06x.jsonl", g.rng.IntN(1<<24))))
			if err != nil {
				return err
			}
			cm := `"isSidechain":true,"userType":"external","cwd":"/home/user/work/bench","sessionId":"` + sid + `","version":"2.1.39","gitBranch":"main","agentId":"acompact-x"`
			saved := parent
			user(cf, cm, g.text(400), false)
			g.st.Requests++
			assistant(cf, cm, "claude-opus-4-6", 3, ctx-1, int64(3000+g.rng.IntN(9000)), 8, "text", g.text(300), g.id("req_011C"), g.id("msg_01"))
			if err := cf.close(); err != nil {
				return err
			}
			parent = saved
			u := g.uuid()
			main.line([]byte(`{"parentUuid":null,"logicalParentUuid":`+parent+`,`+meta+`,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,`), stamp(),
				[]byte(fmt.Sprintf(`,"uuid":"%s","level":"info","compactMetadata":{"trigger":"auto","preTokens":%d}}`, u, ctx+3000)))
			parent = `"` + u + `"`
			u = g.uuid()
			main.line([]byte(`{"parentUuid":`+parent+`,`+meta+`,"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation. `), g.text(14000),
				[]byte(`"},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":"`+u+`",`), stamp(), []byte(`}`))
			parent = `"` + u + `"`
			ctx = envelope
		}
	}
	if sub != nil {
		if err := sub.close(); err != nil {
			return err
		}
	}
	return main.close()
}

// msTime formats unix milliseconds as Claude Code does (RFC 3339, ms, Z).
func msTime(ms int64) string {
	const layout = "2006-01-02T15:04:05.000Z"
	return time.UnixMilli(ms).UTC().Format(layout)
}

// DSHPriceLog is a dsh session on DeepSeek's positional cache (64-token units): the
// envelope is 13,000 tokens, each request reads the one before.
const DSHPriceLog = `{"type":"header","format":"dsh.session","version":1,"session":"p-1","provider":"deepseek","model":"deepseek-v4-pro","contextWindow":1048576,"thresholdTokens":60000}
{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m1","usage":{"inputTokens":20000,"cacheReadTokens":13000,"outputTokens":500}}
{"type":"assistant/message","at":"2026-11-30T10:00:30Z","id":"m2","usage":{"inputTokens":12000,"cacheReadTokens":33000,"outputTokens":500}}
{"type":"assistant/message","at":"2026-11-30T10:01:00Z","id":"m3","usage":{"inputTokens":15000,"cacheReadTokens":45000,"outputTokens":500}}
{"type":"compaction/summary","at":"2026-11-30T10:01:10Z","id":"c1","trigger":"pressure","preTokens":61000,"retainedTokens":15500,"checkpointTokens":3000,"call":{"id":"m-c1","usage":{"inputTokens":470,"cacheReadTokens":45500,"outputTokens":3000}}}
{"type":"assistant/message","at":"2026-11-30T10:01:40Z","id":"m4","usage":{"inputTokens":18508,"cacheReadTokens":12992,"outputTokens":400}}
{"type":"compaction/prune","at":"2026-11-30T10:02:00Z","id":"p1","trigger":"pressure","preTokens":32000,"units":2,"shadowedTokens":9000,"fromTokens":3000}
{"type":"assistant/message","at":"2026-11-30T10:02:30Z","id":"m5","usage":{"inputTokens":8000,"cacheReadTokens":15936,"outputTokens":200}}
`
