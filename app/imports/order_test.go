package imports

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/ccfold"
	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// Every session of a folder has a fold, so each asks for the folder's
// candidates (its latest transcripts, which are not its first by name):
// an import decodes each of them once, in its own pass, and never again
// for another session's prediction (ccfold.ReadTrace). Before, a session
// asking for a candidate whose pass had not run decoded it, and the
// candidate's pass parsed it again; a pass that waited for another's
// trace while holding its own would hang the import.
func TestCandidatesAreDecodedOnce(t *testing.T) {
	// The harness given (the app's follower, --harness) or told from each
	// file's first bytes (`tollgate import PATH`): the order is the same.
	for _, harness := range []string{cclog.Name, ""} {
		t.Run(cmp.Or(harness, "detected"), func(t *testing.T) {
			testCandidatesAreDecodedOnce(t, harness)
		})
	}
}

func testCandidatesAreDecodedOnce(t *testing.T, harness string) {
	projects := filepath.Join(t.TempDir(), "projects")
	var mains []string
	for f := range 2 {
		dir := filepath.Join(projects, fmt.Sprintf("-home-u-p%d", f))
		for s := range 24 {
			mains = append(mains, writeFoldSession(t, dir, f, s))
		}
	}
	db, settings, _ := importEnv(t)
	decoded := countDecodes(t)
	res := importWithin(t, db, settings, []Source{{Path: projects, Harness: harness}},
		"the import hung: a pass waited for a trace that a waiting pass held")
	if res.Folds != len(mains) {
		t.Fatalf("%d folds stored, want %d", res.Folds, len(mains))
	}
	if d := decoded(); len(d) > 0 {
		t.Errorf("candidates decoded again for another session's prediction: %v", d)
	}
	// And the predictions are still the hook's, learned from the sessions
	// before (else the test could not tell which were read).
	learned := 0
	for _, p := range mains {
		tr, err := ccfold.ReadTrace(p)
		if err != nil {
			t.Fatal(err)
		}
		want := ccfold.Replay(tr, ccfold.EarlierSessions(p, ccfold.Start(tr)), ccfold.Env{})
		s, err := db.Series(context.Background(), "claude-code:"+strings.TrimSuffix(filepath.Base(p), ".jsonl"))
		if err != nil || len(s.Folds) != 1 || len(want) != 1 || s.Folds[0].PredictedColdTokens == nil {
			t.Fatalf("%s: %+v, hook %+v, %v", p, s.Folds, want, err)
		}
		if got := *s.Folds[0].PredictedColdTokens; got != want[0].Prediction.Cold {
			t.Errorf("%s: stored prediction %d, the hook's %d", filepath.Base(p), got, want[0].Prediction.Cold)
		}
		if alone := ccfold.Replay(tr, ccfold.NewHistory(), ccfold.Env{}); alone[0].Prediction.Cold != want[0].Prediction.Cold {
			learned++
		}
	}
	if learned == 0 {
		t.Fatal("no prediction learned from an earlier session")
	}
}

// countDecodes counts, until the test ends, the transcripts Trace decodes
// (ccfold.ReadTrace) by name; the function returns them so far.
func countDecodes(t *testing.T) func() map[string]int {
	var mu sync.Mutex
	decoded := map[string]int{}
	testHookReadTrace = func(path string) {
		mu.Lock()
		decoded[filepath.Base(path)]++
		mu.Unlock()
	}
	t.Cleanup(func() { testHookReadTrace = nil })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(decoded)
	}
}

// writeFoldSession writes session s of folder f: a request, a fold, a
// request, an hour after session s-1 began, modified when it ended. Its
// name does not sort as its time does, so the folder's latest sessions
// are spread among the others by name.
func writeFoldSession(t *testing.T, dir string, f, s int) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%08x-0000-4000-8000-%012d", (s*2654435761)%(1<<32), f*100+s)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(s) * time.Hour)
	ts := func(sec int) string { return at.Add(time.Duration(sec) * time.Second).Format(time.RFC3339) }
	meta := `"sessionId":"` + id + `","cwd":"/home/u/p","version":"2.1.332"`
	body := fmt.Sprintf(`{"type":"user",%[1]s,"uuid":"%[2]s-u1","timestamp":"%[3]s","message":{"role":"user","content":"fix it"}}
{"type":"assistant",%[1]s,"uuid":"%[2]s-a1","timestamp":"%[4]s","requestId":"req_%[2]s1","message":{"id":"msg_%[2]s1","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"cache_read_input_tokens":%[7]d,"cache_creation_input_tokens":4000,"output_tokens":5}}}
{"type":"system",%[1]s,"subtype":"compact_boundary","uuid":"%[2]s-b1","timestamp":"%[5]s","compactMetadata":{"trigger":"auto","preTokens":170000}}
{"type":"user",%[1]s,"isCompactSummary":true,"uuid":"%[2]s-u2","timestamp":"%[5]s","message":{"role":"user","content":"Summary: %[8]s"}}
{"type":"assistant",%[1]s,"uuid":"%[2]s-a2","timestamp":"%[6]s","requestId":"req_%[2]s2","message":{"id":"msg_%[2]s2","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"cache_read_input_tokens":21000,"cache_creation_input_tokens":%[9]d,"output_tokens":2}}}
`, meta, id, ts(0), ts(1), ts(60), ts(61), 20000+1000*s, strings.Repeat("x", 10*s), 9000+100*s)
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	end := at.Add(61 * time.Second)
	if err := os.Chtimes(path, end, end); err != nil {
		t.Fatal(err)
	}
	return path
}

// A folder of small sessions before the folder with folds fills the
// window (maxGroupFiles) while the writer stores it: the worker holding
// the next folder's first candidate takes the candidates after it from
// the extra slots, so none is decoded for its prediction and again by its
// own pass (without them, every other candidate is, with 63 files before
// it). A slow job of the first folder (the hook) holds the writer the
// same way.
func TestCandidatesAreDecodedOnceAfterAFullWindow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before int
		slow   int // job whose pass waits (-1: none)
	}{
		{"63 files before", 63, -1},
		{"64 files before", 64, -1},
		{"a slow file before", maxGroupFiles + 8, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			projects := filepath.Join(t.TempDir(), "projects")
			writeSmallSessions(t, filepath.Join(projects, "-a"), tc.before)
			for s := range 16 {
				writeFoldSession(t, filepath.Join(projects, "-b"), 1, s)
			}
			db, settings, _ := importEnv(t)
			decoded := countDecodes(t)
			testHookClaimed = func(i int) {
				if i == tc.slow {
					time.Sleep(300 * time.Millisecond)
				}
			}
			defer func() { testHookClaimed = nil }()
			res, err := Files(context.Background(), db, settings, []Source{{Path: projects, Harness: cclog.Name}}, nil)
			if err != nil || res.Folds != 16 {
				t.Fatalf("%d folds, %v", res.Folds, err)
			}
			if d := decoded(); len(d) > 0 {
				t.Errorf("candidates decoded for another session's prediction as well as by their own pass: %v", d)
			}
		})
	}
}

// Claude Code 2.0 kept a session's subagent transcripts beside the main
// ones (<project>/agent-<id>.jsonl, the session named in their lines):
// they stay in Walk's order (by name, after the main transcripts), so the
// session's requests are numbered in file order, whichever of them were
// written last (not the latest agents ahead of the others, nor an agent
// newer than its main transcript ahead of it).
func TestOldLayoutSubagentsKeepTheirNumbering(t *testing.T) {
	const sid = "aaaaaaaa-0000-4000-8000-000000000001"
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		agent func(k int) time.Time // when agent k was written
		main  time.Time             // when the main transcript was
		want  []string
	}{
		{"agents before their main", func(k int) time.Time { return base.Add(time.Duration(k) * time.Minute) }, base.Add(time.Hour),
			[]string{"main", "agent07", "agent0f", "agent1c", "agent3d", "agent5e", "agent62", "agent9a", "agenta7", "agentb2", "agentc4", "agente8", "agentf3"}},
		{"an agent after its main", func(k int) time.Time { return base.Add(time.Duration(k) * time.Hour) }, base.Add(90 * time.Minute),
			[]string{"main", "agent07", "agent0f", "agent1c", "agent3d", "agent5e", "agent62", "agent9a", "agenta7", "agentb2", "agentc4", "agente8", "agentf3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, settings, _ := importEnv(t)
			dir := filepath.Join(t.TempDir(), "projects", "-home-u-p")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, msg string, at time.Time) {
				line := fmt.Sprintf(`{"type":"assistant","sessionId":"%s","uuid":"u-%s","timestamp":"%s","requestId":"req_%s",`+
					`"message":{"id":"msg_%s","model":"claude-sonnet-4-5","role":"assistant","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`+"\n",
					sid, msg, at.Format(time.RFC3339), msg, msg)
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, at.Add(time.Second), at.Add(time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			write(sid+".jsonl", "main", tc.main)
			// Other sessions, written after all of them: candidates too.
			for s := range 3 {
				id := fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", s)
				line := fmt.Sprintf(`{"type":"assistant","sessionId":"%s","uuid":"o%d","timestamp":"%s","requestId":"req_o%d","message":{"id":"msg_o%d","model":"claude-sonnet-4-5","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`+"\n",
					id, s, base.Format(time.RFC3339), s, s)
				p := filepath.Join(dir, id+".jsonl")
				if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
					t.Fatal(err)
				}
				late := base.Add(48 * time.Hour)
				if err := os.Chtimes(p, late, late); err != nil {
					t.Fatal(err)
				}
			}
			for k, n := range []string{"f3", "1c", "9a", "07", "c4", "5e", "b2", "3d", "e8", "62", "a7", "0f"} {
				write("agent-a"+n+"0000.jsonl", "agent"+n, tc.agent(k))
			}
			if _, err := Files(context.Background(), db, settings, Sources([]string{filepath.Dir(dir)}, "claude-code"), nil); err != nil {
				t.Fatal(err)
			}
			rows, err := db.SQL().Query(`SELECT request_id FROM requests WHERE session_id = ? ORDER BY seq`, "claude-code:"+sid)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				got = append(got, strings.TrimPrefix(strings.Split(id, ":")[0], "msg_"))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("the session's requests in seq order: %v, want Walk's %v", got, tc.want)
			}
		})
	}
}

// A trace is kept as the trace of the file its pass opened: a file
// written to after that (the harness appends while the import reads it)
// is not taken for the one traced, and is decoded again when asked for: a
// stat at put's time would vouch for lines the pass never read.
func TestTraceKeptAsTheFileItsPassOpened(t *testing.T) {
	path := writeFoldSession(t, filepath.Join(t.TempDir(), "projects", "-p"), 0, 0)
	opened, err := os.Stat(path) // the pass opens the file and reads it
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0) // the harness appends meanwhile
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"user","message":{"role":"user","content":"more"}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := newTraceCache(claudePredictor(t), traceCacheBytes)
	c.put(path, &cclog.Trace{}, opened) // the pass publishes what it read
	if c.has(path) {
		t.Fatal("a file appended to after its pass opened it is taken for the one traced")
	}
	tr, err := traceOf(c, path)
	if err != nil || tr == nil || len(tr.Events) == 0 {
		t.Fatalf("Trace of the grown file: %v, %v", tr, err)
	}
	c.put(path, tr, mustStat(t, path))
	if !c.has(path) {
		t.Fatal("the trace of the file as it is was not kept")
	}
}

func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A pass cancelled between its read and its finish predicts nothing (its
// prediction would decode the folder's other candidates for a pass that
// stores nothing); every job is answered, and the import returns the
// cancellation and stores nothing.
func TestACancelledPassPredictsNothing(t *testing.T) {
	for _, procs := range []int{1, 2} {
		t.Run(fmt.Sprint(procs, " workers"), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			projects := filepath.Join(t.TempDir(), "projects")
			for s := range 16 {
				writeFoldSession(t, filepath.Join(projects, "-b"), 1, s)
			}
			db, settings, _ := importEnv(t)
			decoded := countDecodes(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			testHookClaimed = func(i int) {
				if i == 1 {
					cancel()
				}
			}
			defer func() { testHookClaimed = nil }()
			res, err := Files(ctx, db, settings, []Source{{Path: projects, Harness: cclog.Name}}, nil)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("import cancelled at its second file: %v", err)
			}
			if len(res.Files) != 16 {
				t.Fatalf("%d files answered of 16", len(res.Files))
			}
			for _, f := range res.Files {
				if f.Err == nil && !f.Unchanged {
					t.Errorf("%s: no error after the cancellation: %+v", f.Path, f)
				}
			}
			var n int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM requests`).Scan(&n); err != nil || n != 0 {
				t.Errorf("%d requests stored, %v", n, err)
			}
			if d := decoded(); len(d) > 0 {
				t.Errorf("a cancelled pass decoded candidates for its prediction: %v", d)
			}
		})
	}
}

// The same through an import: a candidate appended to after its pass
// parsed it, before the pass published its trace, is not taken for the
// file traced.
func TestAnAppendDuringThePassIsNotTakenForTraced(t *testing.T) {
	projects := filepath.Join(t.TempDir(), "projects")
	var paths []string
	for s := range 3 {
		paths = append(paths, writeFoldSession(t, filepath.Join(projects, "-p"), 0, s))
	}
	grown := paths[2] // the latest: a candidate, traced by its own pass
	testHookParsed = func(path string) {
		if path != grown {
			return
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := f.WriteString(`{"type":"user","message":{"role":"user","content":"more"}}` + "\n"); err != nil {
			t.Error(err)
		}
	}
	defer func() { testHookParsed = nil }()
	db, settings, _ := importEnv(t)
	traces := newTraceCache(claudePredictor(t), traceCacheBytes)
	if _, err := filesWith(context.Background(), db, settings, []Source{{Path: projects, Harness: cclog.Name}}, nil, &traceCaches{m: map[importer.Predictor]*traceCache{traces.pred: traces}}); err != nil {
		t.Fatal(err)
	}
	// What the cache holds for the file as it is now is the trace of all
	// of it (decoded again when a later session asked), not the pass's.
	held, err := traceOf(traces, grown)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := ccfold.ReadTrace(grown)
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Events) != len(whole.Events) {
		t.Fatalf("the cache holds a trace of %d events for the grown transcript, which has %d: the pass's, without the appended line", len(held.Events), len(whole.Events))
	}
}
