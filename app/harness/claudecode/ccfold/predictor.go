package ccfold

import (
	"path/filepath"
	"strings"

	"tollgate/app/harness/claudecode/cclog"
	"tollgate/app/importer"
)

// The predictor is Claude Code's Format.Predictor: an import and `tollgate
// price` give each fold of a main transcript the prediction the PreCompact
// hook would have made there (the transcript cut at its boundary, the
// project's earlier transcripts as history).
func init() { importer.AddPredictor(cclog.Name, predictor{}) }

type predictor struct{}

// Predicts: a main transcript (a subagent's, in <session>/subagents/, has
// no fold the hook is asked about).
func (predictor) Predicts(path string) bool {
	return !strings.Contains(filepath.ToSlash(path), "/subagents/")
}

func (predictor) Named(path string) bool { return cclog.NamedSession(path) != "" }

func (predictor) Candidates(dir string) any { return Candidates(dir) }

func (predictor) MayLearnFrom(cands any, path string) bool {
	c, _ := cands.([]Candidate)
	return MayLearnFrom(c, path)
}

func (predictor) HasFold(path string) bool { return HasFold(path) }

func (predictor) ReadTrace(path string) (any, error) {
	tr, err := ReadTrace(path)
	if err != nil {
		return nil, err
	}
	return tr, nil
}

func (predictor) Predict(path string, tr any, cache importer.TraceCache) map[string]importer.Forecast {
	t, ok := tr.(*cclog.Trace)
	if !ok {
		return nil
	}
	out := map[string]importer.Forecast{}
	for _, f := range Replay(t, EarlierSessionsFrom(path, Start(t), runCache{cache}), Env{}) {
		out[f.Fold.ID] = f.Prediction.Forecast()
	}
	return out
}

func (predictor) PredictLog(path string, tr any) map[*importer.Fold]importer.Forecast {
	t, ok := tr.(*cclog.Trace)
	if !ok {
		return nil
	}
	out := map[*importer.Fold]importer.Forecast{}
	for _, f := range Replay(t, EarlierSessions(path, Start(t)), Env{}) {
		out[f.Fold] = f.Prediction.Forecast()
	}
	return out
}

// Forecast is the prediction as the importer stores and prices it.
func (p Prediction) Forecast() importer.Forecast {
	f := importer.Forecast{Cold: p.Cold, Low: p.Low, High: p.High, Summary: p.Part("summary").Tokens,
		Call: importer.ForecastCall{Read: p.Call.Read, Write: p.Call.Write, Output: p.Call.Output, TTLSeconds: int64(p.Call.TTL.Seconds())}}
	for _, x := range p.Parts {
		f.Parts = append(f.Parts, importer.ForecastPart{Name: x.Name, Tokens: x.Tokens})
	}
	return f
}

// runCache is an import run's TraceCache as the Transcripts, Decoding,
// Lister and HistoryCache that EarlierSessionsFrom reads through.
type runCache struct{ c importer.TraceCache }

func (r runCache) HasFold(path string) bool  { return r.c.HasFold(path) }
func (r runCache) Decoding(path string) bool { return r.c.Decoding(path) }
func (r runCache) Candidates(dir string) []Candidate {
	c, _ := r.c.Candidates(dir).([]Candidate)
	return c
}

func (r runCache) Trace(path string) (*cclog.Trace, error) {
	tr, err := r.c.Trace(path)
	if err != nil {
		return nil, err
	}
	t, _ := tr.(*cclog.Trace)
	return t, nil
}

func (r runCache) History(key string, build func() *History) *History {
	h, _ := r.c.History(key, func() any { return build() }).(*History)
	return h
}

// Cached is an import run's TraceCache as the Transcripts that
// EarlierSessionsFrom reads through.
func Cached(c importer.TraceCache) Transcripts { return runCache{c} }
