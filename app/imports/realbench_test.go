package imports

import (
	"context"
	"path/filepath"
	"testing"

	"tollgate/app/config"
	"tollgate/app/home"
	"tollgate/app/importer/testcorpus"
	"tollgate/storage/sqlite"
)

// BenchmarkImportRealTranscripts imports the real Claude Code transcripts
// of the shared data (main transcripts with their folds, subagents, summary
// calls) into a fresh database per iteration: parsing, tracing for the fold
// predictions, pricing, the ledger, storing. It is the profile target of
// the import (`go test -run '^$' -bench ImportRealTranscripts -cpuprofile
// cpu.prof ./app/imports/`); `make bench-import` measures the same work on
// a 295 MB corpus beside ccusage.
func BenchmarkImportRealTranscripts(b *testing.B) {
	data := filepath.Join(testcorpus.SharedData(b), "claude-code")
	files, err := Walk(data, "claude-code")
	if err != nil || len(files) == 0 {
		b.Fatalf("%d files: %v", len(files), err)
	}
	var size int64
	for _, f := range files {
		size += f.Size
	}
	ctx := context.Background()
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		cfg, err := config.LoadConfig(dir, config.Flags{})
		if err != nil {
			b.Fatal(err)
		}
		db, err := sqlite.Open(ctx, home.DBPath(dir))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := Files(ctx, db, config.NewSettings(cfg), []Source{{Path: data, Harness: "claude-code"}}, nil)
		b.StopTimer()
		if err != nil || res.Folds == 0 || res.Requests == 0 {
			b.Fatalf("%d requests, %d folds: %v", res.Requests, res.Folds, err)
		}
		db.Close()
		b.StartTimer()
	}
}
