package imports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/config"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/claudecode/testcorpus"
	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/home"
	"tollgate/app/importer"
	"tollgate/pricing"
	"tollgate/storage"
	"tollgate/storage/sqlite"
	"tollgate/test/shareddata"
)

func importEnv(t testing.TB) (*sqlite.DB, *config.Settings, string) {
	t.Helper()
	db, settings, dir := openHome(t)
	t.Cleanup(func() { db.Close() })
	return db, settings, dir
}

// openHome is a fresh home's database and settings; the caller closes the
// database.
func openHome(t testing.TB) (*sqlite.DB, *config.Settings, string) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.LoadConfig(dir, config.Flags{})
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), home.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return db, config.NewSettings(cfg), dir
}

// benchCorpus writes the generated Claude Code corpus the import
// benchmarks read: TOLLGATE_BENCH_MB megabytes (default 300).
func benchCorpus(b *testing.B) (string, testcorpus.Stats) {
	mb := int64(300)
	if v := os.Getenv("TOLLGATE_BENCH_MB"); v != "" {
		fmt.Sscan(v, &mb)
	}
	corpus := b.TempDir()
	st, err := testcorpus.ClaudeCode(corpus, testcorpus.Options{Bytes: mb << 20, Seed: 42})
	if err != nil {
		b.Fatal(err)
	}
	return corpus, st
}

// ── an independent decode of a Claude Code session's raw lines ──────────

type ccWant struct {
	requests int
	tokens   pricing.Usage
	folds    []ccWantFold
	calls    pricing.Usage // the compaction transcripts' usage
}

type ccWantFold struct {
	pre    int64
	actual *int64
}

func decodeClaudeSession(t *testing.T, main string) ccWant {
	t.Helper()
	files := []string{main}
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(main, ".jsonl"), "subagents", "*.jsonl"))
	files = append(files, subs...)
	final := map[string]pricing.Usage{}
	compaction := map[string]bool{}
	var w ccWant
	for fi, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		waiting := -1
		for sc.Scan() {
			var l struct {
				Type, Subtype, RequestID string
				IsSidechain              bool
				Message                  struct {
					ID, Model string
					Usage     *struct {
						Input    int64 `json:"input_tokens"`
						Creation int64 `json:"cache_creation_input_tokens"`
						Read     int64 `json:"cache_read_input_tokens"`
						Output   int64 `json:"output_tokens"`
						Split    *struct {
							M5 int64 `json:"ephemeral_5m_input_tokens"`
							H1 int64 `json:"ephemeral_1h_input_tokens"`
						} `json:"cache_creation"`
					}
				}
				CompactMetadata struct{ PreTokens int64 }
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if l.Type == "system" && l.Subtype == "compact_boundary" && fi == 0 {
				w.folds = append(w.folds, ccWantFold{pre: l.CompactMetadata.PreTokens})
				waiting = len(w.folds) - 1
			}
			u := l.Message.Usage
			if l.Type != "assistant" || u == nil || l.Message.Model == "<synthetic>" {
				continue
			}
			tok := pricing.Usage{Input: u.Input, CacheRead: u.Read, CacheWrite: u.Creation, Output: u.Output}
			if u.Split != nil {
				tok.CacheWrite, tok.CacheWrite1h = u.Split.M5, u.Split.H1
			}
			key := l.Message.ID + ":" + l.RequestID
			_, seen := final[key]
			final[key] = tok
			if strings.Contains(filepath.Base(path), "acompact") {
				compaction[key] = true
			}
			if !seen && fi == 0 && !l.IsSidechain && waiting >= 0 {
				c := tok.Uncached()
				w.folds[waiting].actual = &c
				waiting = -1
			}
		}
		f.Close()
	}
	for k, u := range final {
		w.requests++
		w.tokens = addTokens(w.tokens, u)
		if compaction[k] {
			w.calls = addTokens(w.calls, u)
		}
	}
	return w
}

func addTokens(a, b pricing.Usage) pricing.Usage {
	return pricing.Usage{Input: a.Input + b.Input, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite,
		CacheWrite1h: a.CacheWrite1h + b.CacheWrite1h, Output: a.Output + b.Output}
}

func TestImportRealDataMatchesRawLines(t *testing.T) {
	data := shareddata.Dir(t)
	ctx := context.Background()
	db, settings, _ := importEnv(t)
	res, err := Files(ctx, db, settings, []Source{{Path: data}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mains, _ := filepath.Glob(filepath.Join(data, "claude-code", "*.jsonl"))
	checked := 0
	for _, main := range mains {
		var sid struct{ SessionID string }
		b, _ := os.ReadFile(main)
		for _, line := range bytes.Split(b, []byte("\n")) {
			if json.Unmarshal(line, &sid) == nil && sid.SessionID != "" {
				break
			}
		}
		w := decodeClaudeSession(t, main)
		s, err := db.Series(ctx, "claude-code:"+sid.SessionID)
		if err != nil {
			t.Fatalf("%s: %v", main, err)
		}
		name := filepath.Base(main)
		if s.Session.Requests != int64(w.requests) || s.Session.Tokens != w.tokens {
			t.Errorf("%s: %d requests %+v, want %d %+v", name, s.Session.Requests, s.Session.Tokens, w.requests, w.tokens)
		}
		if len(s.Folds) != len(w.folds) {
			t.Fatalf("%s: %d folds, want %d", name, len(s.Folds), len(w.folds))
		}
		for i, f := range s.Folds {
			if f.PreTokens != w.folds[i].pre || fmt.Sprint(deref(f.ActualColdTokens)) != fmt.Sprint(deref(w.folds[i].actual)) {
				t.Errorf("%s fold %d: pre %d actual %v, want %d %v", name, i+1, f.PreTokens, deref(f.ActualColdTokens), w.folds[i].pre, deref(w.folds[i].actual))
			}
			if f.Source != "import" || f.Decision != "allow" || f.Reason != "" || f.Kind != "summary" {
				t.Errorf("%s fold %d: %+v", name, i+1, f)
			}
			// The prediction the hook would have made at the boundary, and
			// its band.
			if b := f.PredictedColdBand; f.PredictedColdTokens == nil || b == nil || b.Low > *f.PredictedColdTokens || b.High < *f.PredictedColdTokens || b.Low <= 0 {
				t.Errorf("%s fold %d: predicted %v band %+v", name, i+1, deref(f.PredictedColdTokens), b)
			} else if a := f.ActualColdTokens; a != nil {
				e := float64(*f.PredictedColdTokens-*a) / float64(*a) * 100
				t.Logf("%s fold %d: predicted %d [%d, %d], actual %d, error %+.1f %%", name, i+1, *f.PredictedColdTokens, b.Low, b.High, *a, e)
				if (e > 10 || e < -10) && (*a < b.Low || *a > b.High) {
					t.Errorf("%s fold %d: %+.1f %% and outside the band", name, i+1, e)
				}
			}
		}
		// Claude Code's own auto-compact threshold, so the chart draws it.
		if s.ThresholdTokens != 167_000 || s.Session.ThresholdTokens != 167_000 {
			t.Errorf("%s: threshold %d / %d, want 167000", name, s.ThresholdTokens, s.Session.ThresholdTokens)
		}
		if w.calls != (pricing.Usage{}) {
			sc := s.Folds[0].SummaryCall
			if sc == nil || sc.Input != w.calls.Input || sc.CacheRead != w.calls.CacheRead || sc.CacheWrite != w.calls.CacheWrite+w.calls.CacheWrite1h || sc.Output != w.calls.Output {
				t.Errorf("%s: summary call %+v, want %+v", name, sc, w.calls)
			}
		}
		for _, p := range s.Points {
			if p.Purpose != "conversation" {
				t.Errorf("%s: a %s point in the series", name, p.Purpose)
			}
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("checked %d sessions", checked)
	}
	// Importing again adds nothing.
	again, err := Files(ctx, db, settings, []Source{{Path: data}}, nil)
	if err != nil || again.Requests != 0 || again.Folds != 0 || again.Updated != 0 || again.Bytes != 0 {
		t.Fatalf("second import: %+v %v", again, err)
	}
	for _, f := range again.Files {
		if !f.Unchanged {
			t.Errorf("%s not seen as unchanged", f.Path)
		}
	}
	if res.Requests == 0 || len(res.Sessions) < 4 { // the shared data grows (otel/ holds a transcript too)
		t.Fatalf("first import: %d requests, sessions %v", res.Requests, res.Sessions)
	}
	// Every request was priced from the built-in table, with its prices kept.
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM requests WHERE priced_by != 'builtin' OR prices = '{}' OR cost_usd <= 0`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d requests priced otherwise (%v)", n, err)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// ── incremental, idempotent, all or nothing ────────────────────────────

func smallCorpus(t testing.TB, dir string) string {
	t.Helper()
	if _, err := testcorpus.ClaudeCode(dir, testcorpus.Options{Bytes: 1 << 20, SessionBytes: 700 << 10, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "projects")
}

func sessionDump(t *testing.T, db *sqlite.DB) string {
	t.Helper()
	list, err := db.Sessions(context.Background(), 100, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Sessions {
		ser, err := db.Series(context.Background(), s.ID)
		if err != nil {
			t.Fatal(err)
		}
		// A fold's place among the conversation points (its seq also counts
		// subagent requests, which depend on the order files were stored).
		var folds []string
		for _, f := range ser.Folds {
			after := 0
			for _, p := range ser.Points {
				if p.Seq <= f.Seq {
					after++
				}
			}
			folds = append(folds, fmt.Sprintf("%s after %d points pre=%d actual=%v call=%v", f.Rewrite, after, f.PreTokens, deref(f.ActualColdTokens), f.SummaryCall != nil))
		}
		out = append(out, fmt.Sprintf("%s req=%d tok=%+v cost=%.9f ctx=%d points=%d folds=%v", s.ID, s.Requests, s.Tokens, s.CostUSD, s.LastContextTokens, len(ser.Points), folds))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func TestImportAppendedLogAddsOnlyNewLines(t *testing.T) {
	ctx := context.Background()
	root := smallCorpus(t, t.TempDir())
	whole, settings, _ := importEnv(t)
	if _, err := Files(ctx, whole, settings, []Source{{Path: root}}, nil); err != nil {
		t.Fatal(err)
	}
	want := sessionDump(t, whole)

	// The same logs, growing: each file is written in pieces cut inside
	// streamed messages (between snapshots of one message, and mid-line).
	files, _ := Walk(root, "")
	grow := t.TempDir()
	db, _, _ := importEnv(t)
	contents := map[string][]byte{}
	for _, f := range files {
		b, _ := os.ReadFile(f.Path)
		rel, _ := filepath.Rel(root, f.Path)
		contents[rel] = b
	}
	updated := 0
	for step := 1; step <= 6; step++ {
		for rel, b := range contents {
			path := filepath.Join(grow, rel)
			os.MkdirAll(filepath.Dir(path), 0o755)
			cut := len(b) * step / 6
			if step < 6 {
				// land between two snapshots of one message when there are any
				if i := bytes.Index(b[cut:], []byte(`"type":"assistant"`)); i >= 0 {
					if nl := bytes.IndexByte(b[cut+i:], '\n'); nl >= 0 {
						cut = cut + i + nl + 1 + 17 // and 17 bytes into the next line
					}
				}
				cut = min(cut, len(b))
			}
			if err := os.WriteFile(path, b[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Files(ctx, db, settings, []Source{{Path: grow}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		updated += res.Updated
	}
	if got := sessionDump(t, db); got != want {
		t.Fatalf("grown:\n%s\nwhole:\n%s", got, want)
	}
	if updated == 0 {
		t.Error("no message straddled a cut: the test does not test the update")
	}
}

func TestImportRewrittenFileStartsOver(t *testing.T) {
	ctx := context.Background()
	db, settings, _ := importEnv(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	line := func(id string, out int) string {
		return fmt.Sprintf(`{"type":"assistant","sessionId":"8a1c1f2e-0000-4000-8000-000000000001","cwd":"/w","timestamp":"2026-02-12T16:02:27.718Z","requestId":"r-%s","message":{"id":"%s","model":"claude-opus-4-6","usage":{"input_tokens":10,"output_tokens":%d}}}`+"\n", id, id, out)
	}
	os.WriteFile(path, []byte(line("a", 5)+line("b", 6)), 0o644)
	if _, err := Files(ctx, db, settings, []Source{{Path: path}}, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(line("c", 7)), 0o644) // shorter, other content
	res, err := Files(ctx, db, settings, []Source{{Path: path}}, nil)
	if err != nil || !res.Files[0].Restarted {
		t.Fatalf("%+v %v", res, err)
	}
	s, _ := db.Session(ctx, "claude-code:8a1c1f2e-0000-4000-8000-000000000001")
	if s.Requests != 1 || s.Tokens.Output != 7 {
		t.Fatalf("after rewrite: %+v", s)
	}
}

func TestMalformedLineRollsBackTheFileOnly(t *testing.T) {
	ctx := context.Background()
	db, settings, _ := importEnv(t)
	root := smallCorpus(t, t.TempDir())
	files, _ := Walk(root, "")
	bad := files[0].Path
	b, _ := os.ReadFile(bad)
	lines := bytes.SplitAfter(b, []byte("\n"))
	n := 0
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"usage":{`)) {
			if n++; n == 40 {
				lines[i] = []byte(`{"type":"assistant","message":{"id":"x","usage":{"input_tokens":` + "\n")
				n = i + 1
				break
			}
		}
	}
	os.WriteFile(bad, bytes.Join(lines, nil), 0o644)
	res, err := Files(ctx, db, settings, []Source{{Path: root}}, nil)
	want := fmt.Sprintf("%s:%d:", bad, n)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one naming %s", err, want)
	}
	if res.Failed != 1 {
		t.Fatalf("failed %d", res.Failed)
	}
	// Nothing of the bad file: no imports row, no session row of its own.
	if _, ok, _ := db.ImportStateOf(ctx, bad); ok {
		t.Fatal("the bad file has an imports row")
	}
	sid := "claude-code:" + strings.TrimSuffix(filepath.Base(bad), ".jsonl")
	var rows int
	db.SQL().QueryRow("SELECT COUNT(*) FROM requests WHERE session_id = ? AND import_key = ?", sid, sqlite.ImportKey(bad)).Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d rows of the bad file stored", rows)
	}
	// The other files were imported.
	if len(res.Sessions) == 0 || res.Requests == 0 {
		t.Fatalf("%+v", res)
	}
}

func TestImportUploadsAndDSH(t *testing.T) {
	ctx := context.Background()
	db, settings, _ := importEnv(t)
	log := `{"type":"header","format":"dsh.session","version":1,"session":"s-1","provider":"deepseek","model":"deepseek-flash","contextWindow":1048576,"thresholdTokens":838861}
{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m1","usage":{"inputTokens":1200,"cacheReadTokens":250000,"outputTokens":900}}
{"type":"compaction/summary","at":"2026-11-30T10:01:00Z","id":"c1","trigger":"pressure","preTokens":830000,"checkpointTokens":4000,"call":{"id":"m-call","usage":{"inputTokens":470,"cacheReadTokens":250000,"outputTokens":4000}}}
{"type":"assistant/message","at":"2026-11-30T10:02:00Z","id":"m2","usage":{"inputTokens":9000,"cacheReadTokens":13000,"outputTokens":100}}
`
	up := func() Result {
		res, err := Files(ctx, db, settings, []Source{{Name: "session.jsonl", Reader: strings.NewReader(log)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := up()
	if first.Requests != 3 || first.Folds != 1 || !strings.HasPrefix(first.Files[0].Path, "upload:") {
		t.Fatalf("%+v", first)
	}
	if second := up(); second.Requests != 0 || second.Folds != 0 {
		t.Fatalf("second upload: %+v", second)
	}
	s, err := db.Series(ctx, "dsh:s-1")
	if err != nil {
		t.Fatal(err)
	}
	if s.ContextWindow != 1048576 || s.ThresholdTokens != 838861 || len(s.Points) != 2 || len(s.Folds) != 1 {
		t.Fatalf("series %+v", s)
	}
	f := s.Folds[0]
	if deref(f.ActualColdTokens) != int64(9000) || f.SummaryCall == nil || f.SummaryCall.Output != 4000 || f.Trigger != "auto" || f.CostUSD <= 0 {
		t.Fatalf("fold %+v call %+v", f, f.SummaryCall)
	}
	// An unknown version is refused, naming the upload and the line.
	_, err = Files(ctx, db, settings, []Source{{Name: "new.jsonl", Harness: "dsh",
		Reader: strings.NewReader(strings.Replace(log, `"version":1`, `"version":3`, 1))}}, nil)
	if err == nil || !strings.Contains(err.Error(), "new.jsonl:1: dsh session log format version 3 is not supported") {
		t.Fatalf("err = %v", err)
	}
}

// A running tollgate writes through its own handle while the import
// writes through another: WAL and the busy timeout keep both whole.
func TestImportBesideARunningWriter(t *testing.T) {
	ctx := context.Background()
	db, settings, dir := importEnv(t)
	live, err := sqlite.Open(ctx, home.DBPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	root := smallCorpus(t, t.TempDir())
	var wg sync.WaitGroup
	wg.Add(1)
	var liveErr error
	go func() {
		defer wg.Done()
		for i := 0; i < 300 && liveErr == nil; i++ {
			_, liveErr = live.RecordRequest(ctx, storage.Request{Session: storage.SessionMeta{ID: "api:1", Harness: "dsh"}, RequestID: fmt.Sprint(i), At: time.Now(), Usage: pricing.Usage{Input: 1}})
		}
	}()
	res, err := Files(ctx, db, settings, []Source{{Path: root}}, nil)
	wg.Wait()
	if err != nil || liveErr != nil || res.Requests == 0 {
		t.Fatalf("import %v, live %v", err, liveErr)
	}
	if s, _ := db.Session(ctx, "api:1"); s.Requests != 300 {
		t.Fatalf("live writer stored %d", s.Requests)
	}
}

func BenchmarkImport(b *testing.B) {
	corpus, st := benchCorpus(b)
	ccusage := os.Getenv("CCUSAGE")
	if ccusage == "" {
		ccusage, _ = exec.LookPath("ccusage")
	}
	if ccusage == "" {
		b.Log("ccusage not found ($CCUSAGE or PATH): reporting tollgate alone; app/imports/testdata/ccusage-bench.sh runs both")
	}
	ctx := context.Background()
	var ours, theirs time.Duration
	b.SetBytes(st.Bytes)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, settings, _ := openHome(b)
		if ccusage != "" {
			cmd := exec.Command(ccusage, "session", "--json", "--offline")
			cmd.Env = append(os.Environ(), "CLAUDE_CONFIG_DIR="+corpus)
			start := time.Now()
			if out, err := cmd.Output(); err != nil || !bytes.Contains(out, []byte(`"session"`)) {
				b.Fatalf("ccusage: %v", err)
			}
			theirs += time.Since(start)
		}
		b.StartTimer()
		start := time.Now()
		res, err := Files(ctx, db, settings, []Source{{Path: filepath.Join(corpus, "projects")}}, nil)
		ours += time.Since(start)
		b.StopTimer()
		if err != nil || res.Requests != st.Requests || res.Folds != st.Folds {
			b.Fatalf("imported %d requests %d folds (want %d, %d): %v", res.Requests, res.Folds, st.Requests, st.Folds, err)
		}
		db.Close()
		b.StartTimer()
	}
	mbps := func(d time.Duration) float64 { return float64(st.Bytes) * float64(b.N) / 1e6 / d.Seconds() }
	b.ReportMetric(mbps(ours), "MB/s")
	b.ReportMetric(float64(st.Requests)*float64(b.N)/ours.Seconds(), "requests/s")
	if theirs > 0 {
		b.ReportMetric(mbps(theirs), "ccusage-MB/s")
		b.ReportMetric(theirs.Seconds()/ours.Seconds(), "x-ccusage")
	}
}

func TestImportSkipsEmptyAndForeignFiles(t *testing.T) {
	db, settings, _ := importEnv(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a log"), 0o644)
	res, err := Files(context.Background(), db, settings, []Source{{Path: dir}}, nil)
	if err != nil || len(res.Files) != 1 || !res.Files[0].Unchanged {
		t.Fatalf("%+v %v", res, err)
	}
	// A log no harness claims is an error naming it, not a guess.
	os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte(`{"hello":"world"}`+"\n"), 0o644)
	_, err = Files(context.Background(), db, settings, []Source{{Path: dir}}, nil)
	if err == nil || !strings.Contains(err.Error(), "other.jsonl: cannot tell which harness wrote it") {
		t.Fatalf("err = %v", err)
	}
}

func TestDetectRealFiles(t *testing.T) {
	data := shareddata.Dir(t)
	files, err := Walk(data, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f.Path)
		h := importer.Detect(f.Path, b[:min(len(b), 4096)])
		want := cclog.Name
		if strings.Contains(f.Path, "/codex/") {
			want = cxlog.Name
		}
		if h != want {
			t.Errorf("%s: detected %q, want %q", f.Path, h, want)
		}
	}
	// subagent transcripts come after the main ones
	sawSub := false
	for _, f := range files {
		sub := strings.Contains(f.Path, "/subagents/")
		if sawSub && !sub {
			t.Errorf("%s listed after a subagent transcript", f.Path)
		}
		sawSub = sawSub || sub
	}
}
