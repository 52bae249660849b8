package cclog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/importer"
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

func readSampleLines(t *testing.T, path string) ([]byte, []sampleLine) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []sampleLine
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var s sampleLine
		if err := json.Unmarshal(l, &s); err != nil {
			t.Fatalf("%s: a line does not parse: %v", path, err)
		}
		lines = append(lines, s)
	}
	return b, lines
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
	data, lines := readSampleLines(t, path)

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
		var folds []*importer.Fold
		for i, r := range res.Records {
			if q := r.Request; q != nil && (q.Purpose != importer.PurposeConversation || q.Thread != "" || q.Usage.Prompt() == 0) {
				t.Fatalf("request %+v", q)
			}
			f := r.Fold
			if f == nil {
				continue
			}
			folds = append(folds, f)
			followed := false
			for _, next := range res.Records[i+1:] {
				if next.Request != nil && next.Request.Purpose == importer.PurposeConversation {
					followed = true
					break
				}
			}
			if followed && (f.ActualCold == nil || f.ActualRequest == "") {
				t.Errorf("fold %s is followed by a request, yet has no actual cold tokens", f.ID)
			}
		}
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
			cold := int64(-1)
			if f.ActualCold != nil {
				cold = *f.ActualCold
			}
			t.Logf("fold %s: %s, %d tokens before, %d cold after (request %s)", f.ID, f.Trigger, f.PreTokens, cold, f.ActualRequest)
		}
		t.Logf("%s: %d lines, %d requests, %d folds", filepath.Base(path), res.Lines, res.Requests(), res.Folds())
	}

	// The subagents' transcripts: requests of their own thread, in the
	// same session.
	subs := subagents(path)
	if len(subs) == 0 {
		t.Fatalf("no subagent transcript beside %s", path)
	}
	for _, sub := range subs {
		data, lines := readSampleLines(t, sub)
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
