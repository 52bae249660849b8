package dsh

import (
	"errors"
	"strings"
	"testing"

	"tollgate/app/importer"
)

func TestVersionAndHeader(t *testing.T) {
	body := `{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m1","usage":{"inputTokens":5}}` + "\n"
	for _, tc := range []struct {
		header, want string
	}{
		{`{"type":"header","format":"dsh.session","version":7,"session":"s1"}`, "format version 7 is not supported (this tollgate reads version 1)"},
		{`{"type":"header","format":"dsh.session","session":"s1"}`, "version missing"},
		{`{"type":"header","format":"dsh.session","version":1}`, "session missing"},
		{`{"type":"header","format":"other","version":1,"session":"s1"}`, "not a dsh session log"},
		{`{"type":"assistant/message","at":"2026-11-30T10:00:00Z","id":"m0","usage":{}}`, "not a dsh session log"},
	} {
		_, err := importer.Parse(strings.NewReader(tc.header+"\n"+body), importer.Options{Harness: Name, Path: "s/session.jsonl"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "s/session.jsonl:1:") {
			t.Errorf("header %s: err = %v, want %q at line 1", tc.header, err, tc.want)
		}
	}
	var ve *UnsupportedVersionError
	_, err := importer.Parse(strings.NewReader(`{"type":"header","format":"dsh.session","version":2,"session":"s1"}`+"\n"), importer.Options{Harness: Name, Path: "x"})
	if !errors.As(err, &ve) || ve.Version != 2 {
		t.Fatalf("err = %v, want UnsupportedVersionError{2}", err)
	}
}

// TestStateKeepsItsFormat: the state a pass returns is stored in the
// imports table and handed back to the next import, so it is pinned to what
// app/importer wrote for dsh logs before this package (both strings were
// taken from that code): a database goes on where it stopped.
func TestStateKeepsItsFormat(t *testing.T) {
	log := `{"type":"header","format":"dsh.session","version":1,"session":"s1","provider":"deepseek","model":"m","profile":"p","title":"t","contextWindow":1000,"thresholdTokens":800}
{"type":"user/message","at":"2026-11-30T10:00:00Z","text":"hi"}
{"type":"assistant/message","at":"2026-11-30T10:00:01Z","id":"m1","usage":{"inputTokens":5,"outputTokens":2}}
{"type":"tool/result","at":"2026-11-30T10:00:02Z","tokens":3}
{"type":"compaction/summary","at":"2026-11-30T10:00:03Z","id":"c1","preTokens":700,"checkpointTokens":50}
{"type":"user/message","at":"2026-11-30T10:00:04Z","text":"go on"}
`
	res, err := importer.Parse(strings.NewReader(log), importer.Options{Harness: Name, Path: "s.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"lines":6,"header":true,"session":"s1","provider":"deepseek","model":"m","profile":"p","title":"t","window":1000,"threshold":800,"position":1,"started":133}`
	if string(res.State) != want {
		t.Errorf("state\n%s, want\n%s", res.State, want)
	}
	// A stored state resumes: started 132 (a prompt and a tool result) names
	// the prompt, the more telling.
	next, err := importer.Parse(strings.NewReader(`{"type":"assistant/message","at":"2026-11-30T10:00:05Z","id":"m2","usage":{"inputTokens":5}}`+"\n"),
		importer.Options{Harness: Name, Path: "s.jsonl", State: []byte(`{"lines":6,"header":true,"session":"s1","started":132}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.Records[0].Request.StartedBy; got != importer.StartedByPrompt || next.Records[0].Request.Line != 7 {
		t.Errorf("resumed request: started by %q at line %d, want %q at 7", got, next.Records[0].Request.Line, importer.StartedByPrompt)
	}
	if want := `{"lines":7,"header":true,"session":"s1","position":1}`; string(next.State) != want {
		t.Errorf("resumed state %s, want %s", next.State, want)
	}
}
