package importer

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tollgate/pricing"
)

// lengthFormat is a registered line format for the test: each line (a JSON
// object) is one request whose input is the line's length.
type lengthFormat struct {
	opts  Options
	recs  []Record
	total int64
}

func (f *lengthFormat) Line(b []byte, n int) error {
	if strings.Contains(string(b), "bad") {
		return fmt.Errorf("line %d: bang", n)
	}
	f.total += int64(len(b))
	f.recs = append(f.recs, Record{Request: &Request{ID: fmt.Sprint(n), Usage: pricing.Usage{Input: int64(len(b))}}})
	return nil
}

func (f *lengthFormat) Finish() (Session, []Record) {
	return Session{ID: "len", Harness: "test-length"}, f.recs
}

func (f *lengthFormat) State(lines int) (json.RawMessage, error) {
	return json.Marshal(map[string]any{"lines": lines, "total": f.total})
}

func init() {
	Register(Format{Name: "test-length", Order: 1, Detect: func(path string, _ []byte) bool { return strings.HasSuffix(path, ".len.jsonl") },
		Subagent:  func(path string) bool { return strings.Contains(path, "/sub/") },
		NewParser: func(o Options) (LineParser, error) { return &lengthFormat{opts: o}, nil }})
}

func TestRegisteredFormatParsesAndResumes(t *testing.T) {
	res, err := Parse(strings.NewReader("{}\n{\"a\":1}\n{\"partial"), Options{Harness: "test-length", Path: "x.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 2 || res.Records[1].Request.Usage.Input != 7 || res.Lines != 2 {
		t.Fatalf("records %+v lines %d", res.Records, res.Lines)
	}
	// The next pass starts where this one stopped and numbers lines on.
	next, err := Parse(strings.NewReader("{\"bad\":1}\n"), Options{Harness: "test-length", Path: "x.jsonl", State: res.State, AtEOF: true})
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("want an error naming line 3, got %v (%+v)", err, next)
	}
	if !slicesContain(Harnesses(), "test-length") {
		t.Fatalf("Harnesses() = %v", Harnesses())
	}
	if Detect("a/b.len.jsonl", nil) != "test-length" || Detect("a/b.jsonl", nil) != "" {
		t.Fatal("Detect does not ask the registered format")
	}
	if !IsSubagent("a/sub/b.jsonl") || IsSubagent("a/b.jsonl") {
		t.Fatal("IsSubagent does not ask the registered format")
	}
	for name, f := range map[string]Format{
		"a name twice":            {Name: "test-length", NewParser: func(Options) (LineParser, error) { return nil, nil }},
		"no parser nor database":  {Name: "test-none"},
		"a name with a colon":     {Name: "a:b", NewParser: func(Options) (LineParser, error) { return nil, nil }},
		"a parser and a database": {Name: "test-both", NewParser: func(Options) (LineParser, error) { return nil, nil }, Database: &Database{}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("registering %s did not panic", name)
				}
			}()
			Register(f)
		}()
	}
}

func TestSessionIDIsHarnessColonID(t *testing.T) {
	if got := SessionID("test-length", "abc"); got != "test-length:abc" {
		t.Fatalf("SessionID = %q", got)
	}
}

func TestUnknownHarnessNamesTheChoices(t *testing.T) {
	_, err := Parse(strings.NewReader(""), Options{Harness: "nope", Path: "f.jsonl"})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "test-length") {
		t.Fatalf("err = %v", err)
	}
}

func slicesContain(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func init() { Register(Format{Name: "test-db", Order: 2, Database: &Database{File: "test.db"}}) }

func TestDatabaseHarnessIsNamedButNotParsed(t *testing.T) {
	if !slicesContain(Harnesses(), "test-db") {
		t.Fatalf("Harnesses() = %v", Harnesses())
	}
	_, err := Parse(strings.NewReader("{}\n"), Options{Harness: "test-db", Path: "x.db"})
	if err == nil || !strings.Contains(err.Error(), "database") || !strings.Contains(err.Error(), "x.db") {
		t.Fatalf("err = %v", err)
	}
}
