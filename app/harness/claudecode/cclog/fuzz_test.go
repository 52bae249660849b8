package cclog

import (
	"bytes"
	"testing"

	"tollgate/app/importer"
)

// The Claude Code trace is fuzzed beside the parsers (app/harness/all);
// seeds are in testdata/fuzz/FuzzClaudeTrace and f.Add below.

// FuzzClaudeTrace: the trace (Options.Trace) never panics, is the
// reference tracer's (refTracer: each value found whole, then read), and
// it reads the records the plain pass reads, its requests theirs.
func FuzzClaudeTrace(f *testing.F) {
	f.Add([]byte(traceLog))
	f.Add([]byte(traceLogReordered))
	f.Add([]byte(traceLogMetaLast))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl"
		// An import's pass is not live (a malformed line fails it): the
		// tracer is held to the reference there too, whatever it returns.
		traceBoth(t, data, false)
		tr, err := traceBoth(t, data, true) // the reference's trace, or t fails
		if err != nil {
			return
		}
		plain, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: path, AtEOF: true, Live: true})
		if err != nil || len(plain.Records) != len(tr.Records) {
			t.Fatalf("plain pass: %v, %d records vs %d", err, len(plain.Records), len(tr.Records))
		}
		reqs := map[*importer.Request]bool{}
		for _, r := range tr.Records {
			if r.Request != nil {
				reqs[r.Request] = true
			}
		}
		for _, e := range TraceOf(tr).Events {
			if e.Kind == TraceRequest && !reqs[e.Request] {
				t.Fatalf("a traced request that is not a record: %+v", e.Request)
			}
			for _, op := range e.Files {
				if op.Path == "" {
					t.Fatalf("a file op without a path: %+v", op)
				}
			}
		}
	})
}
