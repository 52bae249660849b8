package codex

import (
	"bytes"
	"context"
	"time"

	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/importer"
	"tollgate/app/importer/jsonl"
	"tollgate/pricing"
)

// rollout is what the hook needs from a Codex rollout
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl), read with the importer's
// Codex parser (the one parser: the ids and figures the hook records are
// the ones `tollgate import` stores), plus the sizes of the history items
// the parser does not measure.
type rollout struct {
	Session importer.Session
	// Records are every request and fold of the rollout, in order.
	Records []importer.Record
	// Since are the conversation's requests after the last fold.
	Since []*importer.Request
	// AfterFold is the first request after the last fold (nil: no fold, or
	// none after it): its cache read is the envelope Codex keeps.
	AfterFold *importer.Request
	// PendingBytes is the history written after the last request (this
	// turn's prompt, tool outputs not yet sent).
	PendingBytes int64
	// UserBytes are the user messages of the whole rollout: what Codex
	// carries over a compaction besides the summary; PendingUserBytes those
	// written after the last request (this turn's prompt).
	UserBytes, PendingUserBytes int64
	// FirstUserBytes are the user messages before the first request.
	FirstUserBytes int64
	Model          string
	LastAt         time.Time
	// CLIVersion is session_meta's cli_version ("0.171.0").
	CLIVersion string
}

// Version is the Codex version that wrote the rollout ("" when unknown).
func (ro *rollout) Version() string { return ro.CLIVersion }

// codexUserLine and codexItemLine classify a rollout line by its first
// bytes, as the importer does: the payload's own text is never decoded.
var (
	keyResponseItem = []byte(`"type":"response_item"`)
	keyUserRole     = []byte(`"role":"user"`)
	keySessionMeta  = []byte(`"type":"session_meta"`)
	keyCLIVersion   = []byte(`"cli_version":"`)
)

// readRollout reads a live rollout: a line Codex is still writing, or a
// corrupt one, is skipped, never fatal. Only a regular file is read, within
// the importer's limits, and the read gives up when ctx ends.
func readRollout(ctx context.Context, path string) (rollout, error) {
	f, err := importer.OpenRegular(path)
	if err != nil {
		return rollout{}, err
	}
	defer f.Close()
	res, err := importer.Parse(importer.ContextReader(ctx, f), importer.Options{Harness: cxlog.Name, Path: path, AtEOF: true, Live: true})
	if err != nil {
		return rollout{}, err
	}
	ro := newRollout(res)
	if _, err := f.Seek(0, 0); err != nil {
		return ro, err
	}
	err = ro.measure(ctx, f, path)
	return ro, err
}

func newRollout(res *importer.Result) rollout {
	ro := rollout{Session: res.Session, Records: res.Records}
	afterFold := false
	for _, rec := range res.Records {
		switch {
		case rec.Fold != nil:
			ro.Since = ro.Since[:0]
			ro.AfterFold = nil
			afterFold = true
		case rec.Request != nil && rec.Request.Purpose == importer.PurposeConversation:
			q := rec.Request
			if afterFold && ro.AfterFold == nil {
				ro.AfterFold = q
			}
			ro.Since = append(ro.Since, q)
			ro.Model = q.Model
			if !q.At.IsZero() {
				ro.LastAt = q.At
			}
		}
	}
	if ro.Model == "" {
		ro.Model = ro.Session.Model
	}
	return ro
}

// measure sums the history items' sizes: the user messages, those before
// the first request, and everything written after the last request.
func (ro *rollout) measure(ctx context.Context, f interface{ Read([]byte) (int, error) }, path string) error {
	firstLine, lastLine := 0, 0
	for _, rec := range ro.Records {
		if q := rec.Request; q != nil {
			if firstLine == 0 {
				firstLine = q.Line
			}
			lastLine = max(lastLine, q.Line)
		}
	}
	_, err := jsonl.Read(jsonl.ContextReader(ctx, f), jsonl.Options{Path: path, AtEOF: true, Live: true}, func(b []byte, n int) error {
		head := b[:min(len(b), 320)]
		if ro.CLIVersion == "" && bytes.Contains(head, keySessionMeta) {
			ro.CLIVersion = cliVersion(b)
		}
		if !bytes.Contains(head, keyResponseItem) {
			return nil
		}
		size := int64(len(b))
		if bytes.Contains(head, keyUserRole) {
			ro.UserBytes += size
			if firstLine == 0 || n < firstLine {
				ro.FirstUserBytes += size
			}
			if n > lastLine {
				ro.PendingUserBytes += size
			}
		}
		if n > lastLine {
			ro.PendingBytes += size
		}
		return nil
	})
	return err
}

// codexKeptUserTokens caps the user messages Codex carries over a
// compaction (codex-rs/core/src/compact.rs, COMPACT_USER_MESSAGE_MAX_TOKENS:
// 20,000 in 0.171).
const codexKeptUserTokens = 20000

// surface turns the conversation since the last fold into units: one per
// request (the tokens its prompt added to the previous one's). OpenAI's
// cache is positional, so no unit is a breakpoint. The envelope
// (instructions, tools, the developer message: what a compaction keeps in
// front) is the cache read of the first request after the last fold, which
// re-read exactly that; without a fold, the first request's prompt less its
// user messages. pending is what the next request adds and no request has
// sent yet (the last output, this turn's prompt and tool output): it is no
// unit, as the surface is what the provider has cached.
func (ro *rollout) surface() (envelope int64, units []pricing.Unit, pending int64) {
	if len(ro.Since) > 0 {
		first := ro.Since[0].Usage
		if ro.AfterFold != nil && ro.AfterFold.Usage.CacheRead > 0 {
			envelope = ro.AfterFold.Usage.CacheRead
		} else {
			envelope = max(first.Prompt()-(ro.FirstUserBytes+3)/4, 0)
		}
		envelope = min(envelope, first.Prompt())
	}
	units = make([]pricing.Unit, 0, len(ro.Since))
	prompts := make([]int64, len(ro.Since))
	for i, q := range ro.Since {
		prompts[i] = q.Usage.Prompt()
	}
	pricing.Growth(envelope, prompts, func(i int, tokens int64) {
		units = append(units, pricing.Unit{ID: ro.Since[i].ID, Tokens: tokens, Kind: "turn"})
	})
	if len(ro.Since) > 0 {
		pending = ro.Since[len(ro.Since)-1].Usage.Output
	}
	return envelope, units, pending + (ro.PendingBytes+3)/4
}

// keptTokens estimates what Codex re-sends after the summary besides this
// turn's new prompt: the earlier user messages, up to its cap (the new
// prompt is sent, uncached, whether Codex compacts or not).
func (ro *rollout) keptTokens() int64 {
	pending := (ro.PendingUserBytes + 3) / 4
	return max(min((ro.UserBytes+3)/4, codexKeptUserTokens)-pending, 0)
}

// cliVersion reads session_meta's cli_version: a short string of digits,
// dots and letters, else "".
func cliVersion(line []byte) string {
	i := bytes.Index(line, keyCLIVersion)
	if i < 0 {
		return ""
	}
	v := line[i+len(keyCLIVersion):]
	end := bytes.IndexByte(v, '"')
	if end <= 0 || end > 32 {
		return ""
	}
	for _, c := range v[:end] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-' || c == '+') {
			return ""
		}
	}
	return string(v[:end])
}
