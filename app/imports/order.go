package imports

import (
	"io"
	"path/filepath"
	"slices"

	"tollgate/app/importer"
)

// candidatesFirst moves a folder's candidates (the latest logs, which its
// format's Predictor learns from for each of its sessions with a fold)
// ahead of its other main logs, the order otherwise kept. Imported first,
// a candidate is traced by its own pass and published, instead of being
// decoded for a session before it and then parsed again by its own pass
// (about 9 % of an import's CPU on a folder of Claude Code transcripts).
// Only logs the predictor calls Named move: each is a session of its own,
// so no session's requests are numbered in another order. A subagent's
// log and a file of another name (its session comes from its lines) stay
// where Walk put them, and end the run of files that move. A folder with
// fewer than two files new to the database (the follower's import of a
// growing log, an import run again) is not listed: no session of it would
// decode another's.
func (r *importRun) candidatesFirst(jobs []*importJob) {
	isMain := make([]bool, len(jobs)) // once a job: harnessOf may read the file
	head := make([]byte, headSize)
	for i, j := range jobs {
		if r.ctx.Err() != nil {
			return // the run answers every job as cancelled
		}
		if p, c := r.predictorOf(j, r.harnessOf(j, head)); p != nil && p.Named(j.path) {
			isMain[i], j.cache = true, c
		}
	}
	for i := 0; i < len(jobs); {
		if !isMain[i] {
			i++
			continue
		}
		dir := filepath.Dir(jobs[i].path)
		j, fresh := i, 0
		for ; j < len(jobs) && isMain[j] && filepath.Dir(jobs[j].path) == dir; j++ {
			if _, known := r.states[jobs[j].path]; !known {
				fresh++
			}
		}
		if fresh < 2 {
			i = j
			continue
		}
		for _, job := range jobs[i:j] {
			job.candidate = job.cache.mayLearnFrom(job.path)
		}
		slices.SortStableFunc(jobs[i:j], func(a, b *importJob) int {
			switch {
			case a.candidate == b.candidate:
				return 0
			case a.candidate:
				return -1
			}
			return 1
		})
		i = j
	}
}

// harnessOf says which harness wrote job's file before its pass reads
// it, as the pass will: the harness given, else the one stored with the
// file, else what its first bytes say (`tollgate import PATH` without
// --harness; one read of headSize bytes a uuid-named file new to the
// database, into head). "" when it cannot tell: the file then keeps its
// place.
func (r *importRun) harnessOf(job *importJob, head []byte) string {
	if job.src.Harness != "" || job.src.Reader != nil {
		return job.src.Harness
	}
	if st, ok := r.states[job.path]; ok && st.Harness != "" {
		return st.Harness
	}
	f, err := importer.OpenRegular(job.path)
	if err != nil {
		return ""
	}
	defer f.Close()
	n, _ := io.ReadFull(f, head[:headSize])
	return importer.Detect(job.path, head[:n])
}
