package cxlog

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/importer"
	"tollgate/app/importer/importertest"
)

// The sample in ../testdata/sample is the rollout the real Codex CLI
// 0.171.0 (`codex exec`) wrote in test/harness's TestCodexPreCompactHook
// (run with TOLLGATE_SAMPLE_DIR): turns against a fake Responses API with a
// declined, an allowed and an unguarded remote compaction. The parser must
// read it as Codex wrote it: one request per new token_count, one fold per
// compacted item, and the cold tokens of the request after each.

type sampleLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Info *struct {
			Total *struct {
				Total int64 `json:"total_tokens"`
			} `json:"total_token_usage"`
			Last *struct {
				Input int64 `json:"input_tokens"`
			} `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

func TestRealCodexSample(t *testing.T) {
	rollouts, err := filepath.Glob(filepath.Join("..", "testdata", "sample", "rollout-*.jsonl"))
	if err != nil || len(rollouts) != 1 {
		t.Fatalf("want one rollout: %v %v", rollouts, err)
	}
	path := rollouts[0]
	if !isRollout(path) {
		t.Fatalf("%s: not named as a rollout", path)
	}
	stem := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	uuid := stem[len(stem)-36:]
	data, lines := importertest.ReadLines[sampleLine](t, path)
	if !detect(path, data[:min(len(data), 4096)]) {
		t.Fatal("not detected as a rollout")
	}
	// What the rollout holds, read here: its session, the lines of its
	// compactions (Codex 0.171.0 writes a compacted item, no
	// context_compacted event) and its requests (a token_count with a new
	// cumulative total; Codex repeats the last one after a compaction).
	var meta string
	var compacted []int
	totals := map[int64]bool{}
	for i, l := range lines {
		switch {
		case l.Type == "session_meta":
			meta = l.Payload.ID
		case l.Type == "compacted":
			compacted = append(compacted, i+1)
		case l.Type == "event_msg" && l.Payload.Type == "context_compacted":
			t.Fatalf("line %d: a context_compacted event (the test counts compacted items only)", i+1)
		case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Total != nil &&
			l.Payload.Info.Last != nil && l.Payload.Info.Last.Input > 0:
			totals[l.Payload.Info.Total.Total] = true
		}
	}
	if meta != uuid || len(compacted) == 0 || len(totals) == 0 {
		t.Fatalf("the sample: session %q (named %s), %d compactions, %d requests", meta, uuid, len(compacted), len(totals))
	}

	res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: path, AtEOF: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.ID != importer.SessionID(Name, uuid) || res.Session.Harness != Name || res.Lines != len(lines) || res.Session.Model == "" {
		t.Fatalf("session %+v, %d lines read of %d", res.Session, res.Lines, len(lines))
	}
	if n := res.Requests(); n == 0 || n != len(totals) {
		t.Fatalf("%d requests, the rollout has %d token counts with new totals", n, len(totals))
	}
	for _, r := range res.Records {
		if q := r.Request; q != nil && (q.Purpose != importer.PurposeConversation || q.Usage.Prompt() == 0) {
			t.Fatalf("request %+v (a remote compaction shows no summary call)", q)
		}
	}
	folds := importertest.Folds(t, res.Records)
	if len(folds) != len(compacted) {
		t.Fatalf("%d folds, Codex wrote %d compacted items", len(folds), len(compacted))
	}
	for i, f := range folds {
		if f.Line != compacted[i] || f.Kind != importer.KindSummary || f.PreTokens <= 0 || f.ID == "" || f.At.IsZero() {
			t.Errorf("fold %d: %+v, the compacted item at line %d", i, f, compacted[i])
		}
		t.Logf("fold at line %d: %d tokens before, %d cold after (request %s)", f.Line, f.PreTokens, importertest.Cold(f), f.ActualRequest)
	}
	t.Logf("%s: %d lines, %d requests, %d folds", filepath.Base(path), res.Lines, res.Requests(), res.Folds())
}
