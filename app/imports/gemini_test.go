package imports

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"tollgate/app/harness/gemini"
	"tollgate/app/importer"
)

func TestGeminiDefaultRoot(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	rootOf := func() string {
		for _, r := range DefaultRoots(getenv, "/home/u") {
			if r.Harness == gemini.Harness {
				return r.Dir
			}
		}
		return ""
	}
	if got := rootOf(); got != "/home/u/.gemini/tmp" {
		t.Errorf("root %q", got)
	}
	// GEMINI_CLI_HOME stands for the home folder, .gemini included below it.
	env["GEMINI_CLI_HOME"] = "/srv/g"
	if got := rootOf(); got != "/srv/g/.gemini/tmp" {
		t.Errorf("with GEMINI_CLI_HOME: root %q", got)
	}
	if !ValidHarness(gemini.Harness) || !slices.Contains(importer.Harnesses(), gemini.Harness) {
		t.Errorf("gemini is not an accepted harness: %v", importer.Harnesses())
	}
}

// geminiTree lays out a Gemini CLI home's tmp folder: a project's session,
// a subagent's file under its parent's folder, and files that are not
// sessions (tool output, the prompt log, a checkpoint).
func geminiTree(t *testing.T) (root, session, subagent string) {
	t.Helper()
	real, err := os.ReadFile(filepath.Join("..", "harness", "gemini", "testdata", "real-0.61.0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(t.TempDir(), ".gemini", "tmp")
	chats := filepath.Join(root, "work", "chats")
	session = filepath.Join(chats, "session-2026-12-01T10-00-6a4a3c4e.jsonl")
	subagent = filepath.Join(chats, "6a4a3c4e-0000-4000-8000-000000000000", "sub-1.jsonl")
	sub := `{"sessionId":"sub-1","projectHash":"a0","startTime":"2026-12-01T10:00:00Z","kind":"subagent"}
{"id":"m1","timestamp":"2026-12-01T10:00:01Z","type":"gemini","content":"x","tokens":{"input":3000,"output":5,"cached":0,"total":3005},"model":"gemini-2.5-flash"}
`
	for path, body := range map[string]string{
		session:                                  string(real),
		subagent:                                 sub,
		filepath.Join(root, "work", "logs.json"): `[{"sessionId":"x","message":"hi"}]`,
		filepath.Join(root, "work", "tool-outputs", "out-1.jsonl"): `{"sessionId":"x","projectHash":"p"}` + "\n",
		filepath.Join(root, "work", "checkpoint-a.json"):           `{}`,
		filepath.Join(root, "work", "chats", "session-old.json"):   `{"sessionId":"x","messages":[]}`,
	} {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, session, subagent
}

func TestWalkFindsGeminiSessions(t *testing.T) {
	root, session, subagent := geminiTree(t)
	files, err := Walk(root, gemini.Harness)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	// The session's own file first, so its rows are numbered before its
	// subagent's (whose folder, its parent's id, sorts before "session-").
	if want := []string{session, subagent}; !slices.Equal(paths, want) {
		t.Fatalf("Walk found %v, want %v", paths, want)
	}
}

// A Gemini CLI session imported without --harness is told from a Claude
// Code transcript (both name a "sessionId"), stored with the figures the
// endpoint sent, priced at Gemini's prices, and its cached count's drop is
// a break in the stored ledger.
func TestImportGeminiSessionFeedsTheLedger(t *testing.T) {
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	_, session, _ := geminiTree(t)
	res, err := Files(ctx, db, settings, []Source{{Path: session}}, nil)
	if err != nil || res.Requests != 3 || res.Files[0].Harness != gemini.Harness {
		t.Fatalf("import: %+v %v", res, err)
	}
	s, err := db.Session(ctx, res.Sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	if s.Harness != gemini.Harness || s.Provider != gemini.Provider || s.Model != "gemini-2.5-pro" || s.Requests != 3 ||
		s.Tokens.Input != 7764+23+7807 || s.Tokens.CacheRead != 7763 || s.Tokens.Output != 3 || s.PricedByDefault {
		t.Fatalf("session %+v", s)
	}
	// Gemini 2.5 Pro: $1.25 a million uncached, $0.125 cached, $10 output.
	if want := (7764+23+7807)*1.25e-6 + 7763*0.125e-6 + 3*10e-6; s.CostUSD < want*0.999 || s.CostUSD > want*1.001 {
		t.Errorf("cost %g, want %g", s.CostUSD, want)
	}
	breaks, err := db.SessionBreaks(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(breaks.Breaks) != 1 {
		t.Fatalf("breaks %+v", breaks.Breaks)
	}
	b := breaks.Breaks[0]
	if b.Seq != 3 || b.ExpectedCachedTokens != 7786 || b.CacheReadTokens != 0 || b.RebilledTokens != 7786 || b.StartedBy != importer.StartedByPrompt {
		t.Fatalf("break %+v", b)
	}
}

// A compression the real Gemini CLI made is stored as a fold, and the
// break of the request after it is the fold's (cause rewrite).
func TestImportGeminiCompressionIsARewrite(t *testing.T) {
	db, settings, _ := importEnv(t)
	ctx := context.Background()
	path := filepath.Join("..", "harness", "gemini", "testdata", "real-0.61.0-compression.jsonl")
	res, err := Files(ctx, db, settings, []Source{{Path: path, Harness: gemini.Harness}}, nil)
	if err != nil || res.Requests != 3 || res.Folds != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	breaks, err := db.SessionBreaks(ctx, res.Sessions[0])
	if err != nil || len(breaks.Breaks) != 1 {
		t.Fatalf("breaks %+v %v", breaks, err)
	}
	if b := breaks.Breaks[0]; b.Seq != 3 || b.Cause != "rewrite" || b.Rewrite == nil || b.StartedBy != importer.StartedByCompaction ||
		b.ExpectedCachedTokens != 10769 || b.CacheReadTokens != 7765 || b.RebilledTokens != 10769-7765 {
		t.Fatalf("break %+v", b)
	}
}
