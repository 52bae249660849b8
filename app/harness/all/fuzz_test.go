package all_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/harness/dsh"
	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

// Every parser is fuzzed: no input panics, Consumed never passes the input,
// and a log read in two passes (cut anywhere, as a growing file is) gives
// the requests one pass gives. Seeds are in testdata/fuzz/<Fuzz…>/ (written
// by TestWriteFuzzSeeds with TOLLGATE_WRITE_FUZZ_SEEDS=1) and f.Add below.

func fuzzParser(f *testing.F, harness, path string, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s, uint16(len(s)/2))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		one, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: harness, Path: path, AtEOF: true})
		if err != nil {
			return
		}
		if one.Consumed > int64(len(data)) || one.Consumed < 0 {
			t.Fatalf("consumed %d of %d", one.Consumed, len(data))
		}
		for _, r := range one.Records {
			if (r.Request == nil) == (r.Fold == nil) {
				t.Fatalf("record with both or neither: %+v", r)
			}
			if q := r.Request; q != nil && (q.Usage.Input < 0 || q.Usage.Output < 0 || q.Usage.CacheRead < 0 || q.Usage.CacheWrite < 0 || q.Usage.CacheWrite1h < 0) {
				t.Fatalf("negative usage %+v", q)
			}
		}
		if importer.IsZstd(path) {
			return // cuts of compressed data are TestZstdIncompleteFrameWaits's
		}
		c := int(cut) % (len(data) + 1)
		g1 := got{requests: map[string]pricing.Usage{}, purposes: map[string]string{}, sessions: map[string]bool{}}
		g1.add(one)
		first, err := importer.Parse(bytes.NewReader(data[:c]), importer.Options{Harness: harness, Path: path})
		if err != nil {
			t.Fatalf("the first pass fails where the whole succeeds: %v", err)
		}
		second, err := importer.Parse(bytes.NewReader(data[first.Consumed:]), importer.Options{Harness: harness, Path: path, State: first.State, AtEOF: true})
		if err != nil {
			t.Fatalf("the second pass fails where the whole succeeds: %v", err)
		}
		g2 := got{requests: map[string]pricing.Usage{}, purposes: map[string]string{}, sessions: map[string]bool{}}
		g2.add(first)
		g2.add(second)
		if fmt.Sprint(sortedUsage(g1.requests)) != fmt.Sprint(sortedUsage(g2.requests)) {
			t.Fatalf("two passes (cut %d): %v\none pass: %v", c, sortedUsage(g2.requests), sortedUsage(g1.requests))
		}
		if len(g1.folds) != len(g2.folds) {
			t.Fatalf("two passes: %d folds, one pass: %d", len(g2.folds), len(g1.folds))
		}
		// What started each request, and its thread, survive the cut.
		if s1, s2 := startsOf(one), startsOf(first, second); s1 != s2 {
			t.Fatalf("two passes (cut %d) started by\n%s\none pass\n%s", c, s2, s1)
		}
	})
}

// startsOf lists each request's thread and what started it, by id, as its
// first appearance says (a message continued in a later pass says nothing).
func startsOf(results ...*importer.Result) string {
	seen := map[string]bool{}
	var b bytes.Buffer
	for _, res := range results {
		for _, r := range res.Records {
			if q := r.Request; q != nil && !seen[q.ID] {
				seen[q.ID] = true
				fmt.Fprintf(&b, "%s %q %q\n", q.ID, q.Thread, q.StartedBy)
			}
		}
	}
	return b.String()
}

func seedsOf(harness string) [][]byte {
	var out [][]byte
	for _, l := range syntheticLogs(nil) {
		if l.harness != harness || importer.IsZstd(l.path) {
			continue
		}
		lines := bytes.SplitAfter(l.data, []byte("\n"))
		// the first lines, and a window around each kind of record
		out = append(out, bytes.Join(lines[:min(len(lines), 12)], nil))
		for i := 12; i < len(lines); i += 17 {
			out = append(out, bytes.Join(lines[i:min(len(lines), i+6)], nil))
		}
	}
	return out
}

func FuzzClaudeCode(f *testing.F) {
	fuzzParser(f, cclog.Name, "p/0b6f3a52-1c1e-4c55-9d0e-3f1f2d0c9a11.jsonl", seedsOf(cclog.Name))
}

func FuzzClaudeCodeSubagent(f *testing.F) {
	fuzzParser(f, cclog.Name, "p/s/subagents/agent-acompact-1.jsonl", seedsOf(cclog.Name))
}

func FuzzCodex(f *testing.F) {
	fuzzParser(f, cxlog.Name, "rollout-x.jsonl", seedsOf(cxlog.Name))
}

func FuzzDSH(f *testing.F) {
	fuzzParser(f, dsh.Name, "session.jsonl", seedsOf(dsh.Name))
}

func FuzzDSHZstd(f *testing.F) {
	var seeds [][]byte
	for _, s := range seedsOf(dsh.Name) {
		seeds = append(seeds, zstdFrames(f, s))
	}
	fuzzParser(f, dsh.Name, "session.jsonl.zstd", seeds)
}

// FuzzScanner: the scanner accepts every valid JSON object and never
// panics on anything else.
func FuzzScanner(f *testing.F) {
	for _, s := range [][]byte{
		[]byte(`{"a":1,"b":[1,2,{"c":"d\"e"}],"e":null,"f":true,"g":-1.5e3}`),
		[]byte(`{"usage":{"input_tokens":3,"cache_creation":{"ephemeral_5m_input_tokens":1}}}`),
		[]byte(`{"s":"\\\\\"","t":"\u00e9"}`),
		[]byte(`{"a":[[[[[]]]]]}`),
		[]byte(`{"a":"unterminated}`),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := jsonl.Scanner{B: data}
		s.Skip()
		s.End()
		var v any
		if json.Unmarshal(data, &v) == nil && s.Err != nil {
			if _, isObj := v.(map[string]any); isObj && maxDepth(data) < 64 {
				t.Fatalf("valid JSON refused: %v", s.Err)
			}
		}
		// walking keys with field-by-field reads must not panic either
		s = jsonl.Scanner{B: data}
		s.Object(func(k []byte) {
			switch len(k) % 4 {
			case 0:
				s.Count()
			case 1:
				s.Str()
			case 2:
				s.StrLen()
			default:
				s.Skip()
			}
		})
	})
}

func maxDepth(b []byte) int {
	d, m := 0, 0
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			d++
			m = max(m, d)
		case !in && (c == '}' || c == ']'):
			d--
		}
	}
	return m
}

// TestWriteFuzzSeeds (re)writes the committed seed corpora from the
// synthetic logs: TOLLGATE_WRITE_FUZZ_SEEDS=1 go test -run WriteFuzzSeeds.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("TOLLGATE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set TOLLGATE_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz")
	}
	write := func(name string, i int, args ...any) {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				b.WriteString("[]byte(" + strconv.Quote(string(v)) + ")\n")
			case uint16:
				fmt.Fprintf(&b, "uint16(%d)\n", v)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, h := range map[string]string{"FuzzClaudeCode": cclog.Name, "FuzzClaudeCodeSubagent": cclog.Name, "FuzzCodex": cxlog.Name, "FuzzDSH": dsh.Name} {
		for i, s := range seedsOf(h) {
			write(name, i, s, uint16(len(s)/3))
		}
	}
	for i, s := range seedsOf(dsh.Name) {
		write("FuzzDSHZstd", i, zstdFrames(t, s), uint16(0))
	}
	for i, s := range []string{`{"a":{"b":[1,"x\"y",{"c":null}]},"d":12}`, `{"message":{"usage":{"input_tokens":1e3}}}`, `{"x":"\ud83d\ude00"}`} {
		write("FuzzScanner", i, []byte(s))
	}
}
