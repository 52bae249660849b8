package all_test

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"tollgate/app/harness/dsh"
	"tollgate/app/importer"

	"github.com/klauspost/compress/zstd"
)

// zstdBomb builds frames that each decode to size bytes of fill from a few
// KiB: RLE blocks of 128 KiB (RFC 8878 §3.1.1.2), an 8 MiB window, no
// content size, so nothing but decoding tells how large a frame is.
func zstdBomb(frames int, size int64, fill byte) []byte {
	var out []byte
	for f := 0; f < frames; f++ {
		out = append(out, 0x28, 0xB5, 0x2F, 0xFD) // magic
		out = append(out, 0x00)                   // no content size, not single-segment
		out = append(out, 13<<3)                  // window 1<<23
		left := size
		for left > 0 {
			n := min(left, 128<<10)
			left -= n
			h := uint32(1<<1) | uint32(n)<<3 // RLE
			if left == 0 {
				h |= 1
			}
			out = append(out, byte(h), byte(h>>8), byte(h>>16), fill)
		}
	}
	return out
}

func TestBoundedReaders(t *testing.T) {
	line := string(bytes.SplitAfter(synthDSH(1), []byte("\n"))[0]) // the header: a valid log of one line
	enc, _ := zstd.NewWriter(nil)
	defer enc.Close()
	cases := []struct {
		name   string
		path   string
		data   []byte
		limits importer.Limits
		want   string // "" = no error
		what   string
	}{
		// Six 512 MiB frames of zeros in under 100 KiB: the upload that
		// took the server to 5 GB. The defaults stop it at the line limit.
		{name: "zstd bomb of zeros, default limits", path: "bomb.jsonl.zst", data: zstdBomb(6, 512<<20, 0), want: "bomb.jsonl.zst: a line is longer than the limit of 64 MiB", what: "line"},
		{name: "zstd bomb of newlines, decoded limit", path: "nl.jsonl.zst", data: zstdBomb(4, 8<<20, '\n'), limits: importer.Limits{Decoded: 16 << 20}, want: "nl.jsonl.zst: decompresses to more than the limit of 16 MiB", what: "decoded"},
		{name: "zstd input over the limit", path: "big.jsonl.zst", data: enc.EncodeAll(bytes.Repeat([]byte(line), 100), nil), limits: importer.Limits{Input: 64}, want: "big.jsonl.zst: larger than the limit of 64 bytes", what: "input"},
		{name: "zstd within the limits", path: "ok.jsonl.zst", data: enc.EncodeAll([]byte(line), nil), limits: importer.Limits{Line: 1 << 10, Decoded: 1 << 10}},
		{name: "plain line with no newline", path: "zeros.jsonl", data: make([]byte, 9<<20), limits: importer.Limits{Line: 1 << 20}, want: "zeros.jsonl: a line is longer than the limit of 1 MiB", what: "line"},
		{name: "plain long line inside a chunk", path: "long.jsonl", data: []byte(strings.Repeat("x", 5000) + "\n" + line), limits: importer.Limits{Line: 1 << 10}, want: "long.jsonl: a line is longer than the limit of 1024 bytes", what: "line"},
		{name: "plain file over the input limit", path: "big.jsonl", data: bytes.Repeat([]byte(line), 1000), limits: importer.Limits{Input: 10 << 10}, want: "big.jsonl: larger than the limit of 10240 bytes", what: "input"},
		{name: "plain within the limits", path: "ok.jsonl", data: []byte(line), limits: importer.Limits{Line: 1 << 10, Input: 1 << 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := importer.Parse(bytes.NewReader(tc.data), importer.Options{Harness: dsh.Name, Path: tc.path, AtEOF: true, Limits: tc.limits})
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grown := int64(after.TotalAlloc - before.TotalAlloc); grown > 512<<20 {
				t.Errorf("allocated %d MiB reading %d bytes", grown>>20, len(tc.data))
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			var le *importer.LimitError
			if !errors.As(err, &le) || le.What != tc.what || err.Error() != tc.want {
				t.Fatalf("error %v, want LimitError %q: %q", err, tc.what, tc.want)
			}
		})
	}
}

// FuzzBoundedZstd: whatever the frames, a pass under small limits ends
// with records, a LineError or a LimitError, and holds no more than the
// limits allow.
func FuzzBoundedZstd(f *testing.F) {
	f.Add(zstdBomb(2, 300<<10, 0), uint8(1))
	f.Add(zstdBomb(3, 100<<10, '\n'), uint8(0))
	f.Add(zstdFrames(f, synthDSH(3)), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, atEOF uint8) {
		_, err := importer.Parse(bytes.NewReader(data), importer.Options{Harness: dsh.Name, Path: "f.jsonl.zst", AtEOF: atEOF&1 == 1,
			Limits: importer.Limits{Input: 1 << 20, Line: 256 << 10, Decoded: 1 << 20}})
		var le *importer.LimitError
		var line *importer.LineError
		if err != nil && !errors.As(err, &le) && !errors.As(err, &line) {
			t.Fatalf("error %T %v: want a LimitError or a LineError", err, err)
		}
		if err != nil && !strings.Contains(err.Error(), "f.jsonl.zst") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}
