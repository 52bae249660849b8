package cclog

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"

	"tollgate/app/importer"
)

// Name is Claude Code's harness name: sessions.harness, --harness, and
// the prefix of its session ids.
const Name = "claude-code"

func init() {
	importer.Register(importer.Format{
		Name: Name, Label: "Claude Code", Order: 10,
		Roots:         Roots,
		IsLog:         func(path string) bool { return strings.HasSuffix(path, ".jsonl") },
		Detect:        detect,
		DetectOrder:   40,
		Subagent:      func(path string) bool { return Role(path) != importer.PurposeConversation },
		Companions:    Subagents,
		SessionLine:   "sessionId",
		FoldAfterCall: true,
		NewParser:     func(o importer.Options) (importer.LineParser, error) { return newClaudeParser(o) },
	})
}

// Roots are where Claude Code keeps its transcripts:
// $CLAUDE_CONFIG_DIR/projects (a comma-separated list is accepted), else
// ~/.claude/projects and ~/.config/claude/projects.
func Roots(getenv func(string) string, home string) []string {
	var roots []string
	if v := getenv("CLAUDE_CONFIG_DIR"); v != "" {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				roots = append(roots, filepath.Join(d, "projects"))
			}
		}
		return roots
	}
	return []string{filepath.Join(home, ".claude", "projects"), filepath.Join(home, ".config", "claude", "projects")}
}

// detect: a Claude Code transcript names its "sessionId" on its lines;
// one that starts with a file-history snapshot or a summary line may not
// within its first bytes.
func detect(path string, head []byte) bool {
	first := head
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return bytes.Contains(head, []byte(`"sessionId"`)) || bytes.Contains(first, []byte(`"file-history-snapshot"`)) ||
		bytes.Contains(first, []byte(`"type":"summary"`))
}

// Subagents are the transcripts of a main transcript's subagents and
// summary calls: <session>/subagents/*.jsonl beside <session>.jsonl, in
// name order.
func Subagents(path string) []string {
	if !strings.HasSuffix(path, ".jsonl") {
		return nil
	}
	subs, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "*.jsonl"))
	sort.Strings(subs)
	return subs
}

// Role is the purpose of a Claude Code transcript's requests, by its file
// name: a main transcript's are the conversation, agent-acompact-* holds a
// summary call, other agent-* files a subagent.
func Role(path string) string {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "agent-acompact"):
		return importer.PurposeCompaction
	case strings.HasPrefix(base, "agent-"):
		return importer.PurposeSubagent
	}
	return importer.PurposeConversation
}

// NamedSession is the session a Claude Code main transcript is by its file
// name (<session uuid>.jsonl); "" for a subagent's transcript (its session
// is its folder's or its lines') and for a main transcript of another name
// (its session comes from its lines, and two files may share one).
func NamedSession(path string) string {
	if Role(path) != importer.PurposeConversation {
		return ""
	}
	return sessionFromPath(path, importer.PurposeConversation)
}

// Trace returns the trace the pass built (Options.Trace, or TraceFolds
// and a fold in the first read), nil when it built none.
func (p *claudeParser) Trace() any {
	if p.trace == nil {
		return nil
	}
	tr := p.trace.tr
	return &tr
}

// Head decides, with Options.TraceFolds, from the pass's first read
// whether a main transcript is traced: when the read holds the whole
// input, only if it has a fold.
func (p *claudeParser) Head() func(b []byte, whole bool) {
	if p.trace != nil || p.role != importer.PurposeConversation {
		return nil
	}
	return func(b []byte, whole bool) {
		if !whole || HasFoldKey(b) {
			p.trace = newTracer()
		}
	}
}

// TraceOf is a pass's trace (Result.Trace) as the Claude Code trace, nil
// when the pass built none.
func TraceOf(res *importer.Result) *Trace {
	tr, _ := res.Trace.(*Trace)
	return tr
}
