package cclog

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/importer"
	"tollgate/app/importer/importertest"
)

// The sample in ../testdata/sample is what the real Claude Code 2.1.332
// wrote in test/harness's TestClaudeCodePreCompactHook (run with
// TOLLGATE_SAMPLE_DIR): the main transcript <uuid>.jsonl, with a manual
// and an automatic compaction, and <uuid>/subagents/, one subagent's
// transcript. The parser must read it as Claude Code wrote it: every
// request, exactly the compactions Claude Code marked (compact_boundary
// lines) with their trigger and context, and the cold tokens of the
// request after each.

// sampleLine is what the test reads of a transcript line itself, to check
// the parser against.
type sampleLine struct {
	Type            string `json:"type"`
	Subtype         string `json:"subtype"`
	UUID            string `json:"uuid"`
	SessionID       string `json:"sessionId"`
	RequestID       string `json:"requestId"`
	CompactMetadata *struct {
		Trigger   string `json:"trigger"`
		PreTokens int64  `json:"preTokens"`
	} `json:"compactMetadata"`
	Message *struct {
		ID string `json:"id"`
	} `json:"message"`
}

// sampleRequests counts the distinct model responses (message id and
// request id) of a transcript's assistant lines.
func sampleRequests(lines []sampleLine) int {
	seen := map[string]bool{}
	for _, l := range lines {
		if l.Type == "assistant" && l.Message != nil && l.Message.ID != "" {
			seen[l.Message.ID+"/"+l.RequestID] = true
		}
	}
	return len(seen)
}

func TestRealClaudeCodeSample(t *testing.T) {
	dir := filepath.Join("..", "testdata", "sample")
	mains, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(mains) != 1 {
		t.Fatalf("want one main transcript in %s: %v %v", dir, mains, err)
	}
	path := mains[0]
	uuid := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	session := importer.SessionID(Name, uuid)
	if !importer.IsUUID(uuid) || NamedSession(path) != uuid || Role(path) != importer.PurposeConversation {
		t.Fatalf("%s: not named as a main transcript", path)
	}
	data, lines := importertest.ReadLines[sampleLine](t, path)

	for _, trace := range []bool{false, true} {
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: path, AtEOF: true, Trace: trace})
		if err != nil {
			t.Fatal(err)
		}
		if res.Session.ID != session || res.Session.Harness != Name || res.Lines != len(lines) {
			t.Fatalf("session %+v, %d lines read of %d", res.Session, res.Lines, len(lines))
		}
		if trace && TraceOf(res) == nil {
			t.Fatal("no trace")
		}
		if n := res.Requests(); n == 0 || n != sampleRequests(lines) {
			t.Fatalf("%d requests, the transcript holds %d responses", n, sampleRequests(lines))
		}
		// The folds are the compact_boundary lines, in order, with their
		// trigger and context size.
		var boundaries []sampleLine
		for _, l := range lines {
			if l.Type == "system" && l.Subtype == "compact_boundary" {
				boundaries = append(boundaries, l)
			}
		}
		if len(boundaries) == 0 || bytes.Count(data, []byte(`"subtype":"compact_boundary"`)) != len(boundaries) {
			t.Fatalf("the sample has %d compact_boundary lines", len(boundaries))
		}
		for _, r := range res.Records {
			if q := r.Request; q != nil && (q.Purpose != importer.PurposeConversation || q.Thread != "" || q.Usage.Prompt() == 0) {
				t.Fatalf("request %+v", q)
			}
		}
		folds := importertest.Folds(t, res.Records)
		if len(folds) != len(boundaries) {
			t.Fatalf("%d folds, Claude Code wrote %d compact_boundary lines", len(folds), len(boundaries))
		}
		for i, f := range folds {
			b := boundaries[i]
			if b.CompactMetadata == nil || f.Kind != importer.KindSummary || f.Trigger != b.CompactMetadata.Trigger ||
				f.PreTokens != b.CompactMetadata.PreTokens || f.ID == "" || f.At.IsZero() {
				t.Errorf("fold %d: %+v, the boundary %+v", i, f, b.CompactMetadata)
			}
		}
		if trace {
			continue
		}
		for _, f := range folds {
			t.Logf("fold %s: %s, %d tokens before, %d cold after (request %s)", f.ID, f.Trigger, f.PreTokens, importertest.Cold(f), f.ActualRequest)
		}
		t.Logf("%s: %d lines, %d requests, %d folds", filepath.Base(path), res.Lines, res.Requests(), res.Folds())
	}

	// The subagents' transcripts: requests of their own thread, in the
	// same session.
	subs := Subagents(path)
	if len(subs) == 0 {
		t.Fatalf("no subagent transcript beside %s", path)
	}
	for _, sub := range subs {
		data, lines := importertest.ReadLines[sampleLine](t, sub)
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: sub, AtEOF: true})
		if err != nil {
			t.Fatal(err)
		}
		thread := strings.TrimSuffix(filepath.Base(sub), ".jsonl")
		if res.Session.ID != session || res.Folds() != 0 || res.Requests() == 0 || res.Requests() != sampleRequests(lines) {
			t.Fatalf("%s: session %q, %d requests (of %d responses), %d folds", sub, res.Session.ID, res.Requests(), sampleRequests(lines), res.Folds())
		}
		for _, r := range res.Records {
			if q := r.Request; q.Purpose != Role(sub) || q.Purpose != importer.PurposeSubagent || q.Thread != thread {
				t.Fatalf("%s: request %+v", sub, q)
			}
		}
		for _, l := range lines {
			if l.SessionID != "" && l.SessionID != uuid {
				t.Fatalf("%s: a line of session %s", sub, l.SessionID)
			}
		}
		t.Logf("%s: %d lines, %d requests", filepath.Base(sub), res.Lines, res.Requests())
	}
}
