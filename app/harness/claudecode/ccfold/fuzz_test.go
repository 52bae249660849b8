package ccfold

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// FuzzPredict: any transcript the parser reads predicts without panicking,
// every prediction inside its own band and no part negative.
func FuzzPredict(f *testing.F) {
	if dir, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "..", "shared", "data", "claude-code")); err == nil {
		if b, err := os.ReadFile(filepath.Join(dir, "small-manual-compact.jsonl")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"system","subtype":"compact_boundary","timestamp":"2026-03-01T10:05:00Z","compactMetadata":{"trigger":"manual","preTokens":1}}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: cclog.Name, Path: "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", AtEOF: true, Live: true, Trace: true})
		if err != nil {
			return
		}
		check := func(p Prediction) {
			if p.Low > p.Cold || p.Cold > p.High || p.Low < 0 {
				t.Fatalf("prediction %d outside its band [%d, %d]", p.Cold, p.Low, p.High)
			}
			for _, x := range p.Parts {
				if x.Tokens < 0 || x.Low > x.Tokens || x.Tokens > x.High {
					t.Fatalf("part %+v", x)
				}
			}
		}
		for _, fd := range Replay(cclog.TraceOf(res), nil, Env{}) {
			check(fd.Prediction)
		}
		check(Predict(cclog.TraceOf(res), nil, Env{}, importer.TriggerAuto, time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)))
	})
}
