package cclog

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"tollgate/app/importer"
	"tollgate/test/shareddata"
)

// BenchmarkTraceRealTranscripts parses the real main transcripts as an
// import reads a new one: records and the fold predictor's trace in one
// pass (the parse workers' work).
func BenchmarkTraceRealTranscripts(b *testing.B) {
	benchRealTranscripts(b, true)
}

// BenchmarkParseRealTranscripts is the same pass without the trace (a
// subagent's transcript, or lines appended to a main one).
func BenchmarkParseRealTranscripts(b *testing.B) {
	benchRealTranscripts(b, false)
}

func benchRealTranscripts(b *testing.B, trace bool) {
	paths, _ := filepath.Glob(filepath.Join(shareddata.Dir(b), "claude-code", "*.jsonl"))
	var files [][]byte
	var size int64
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
		size += int64(len(data))
	}
	if len(files) == 0 {
		b.Fatal("no transcripts")
	}
	b.SetBytes(size)
	for b.Loop() {
		for i, data := range files {
			res, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: Name, Path: paths[i], Trace: trace})
			if err != nil || len(res.Records) == 0 || (TraceOf(res) == nil) == trace {
				b.Fatalf("%s: %v", paths[i], err)
			}
		}
	}
}
