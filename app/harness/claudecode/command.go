package claudecode

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"tollgate/app/harness/hookio"
	"tollgate/guard/client"
)

// RunCommand is the command hook (`tollgate hook claude-code`): it reads
// Claude Code's hook JSON from stdin, asks tollgate, and prints its answer
// on stdout: {"decision":"block","reason":"…"} when the compaction is
// declined, and a systemMessage Claude Code shows the user saying what
// tollgate did (also when tollgate is not running). Notes go to stderr. It
// never fails the hook: tollgate not running or malformed input allows the
// compaction.
func RunCommand(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, opts Options) {
	var in hookInput
	if !hookio.Input(stdin, stderr, "PreCompact hook input", func(b []byte) (err error) { in, err = decodeClaudeHookInput(b); return err }) {
		stdout.Write(claudeOutput(claudeVerdict{Message: "tollgate could not read the hook's input: the compaction runs unguarded."}))
		return
	}
	c, log, ok := hookio.Dial(opts.Home, stderr)
	if !ok {
		stdout.Write(claudeOutput(claudeVerdict{Message: hookio.Unguarded}))
		return
	}
	opts.Log = log
	if in.HookEventName == claudePostCompact {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := reportClaudeCompaction(ctx, c, in); err != nil {
			fmt.Fprintln(stderr, "tollgate: reporting the compaction's outcome:", err)
		}
		return
	}
	v := decideClaudePreCompact(ctx, c, in, opts)
	if v.Note != "" {
		fmt.Fprintln(stderr, v.Note)
	}
	stdout.Write(claudeOutput(v))
}

// HookRoute is the authenticated route of the HTTP variant of the
// hook: Claude Code POSTs the PreCompact JSON there (`"type": "http"`,
// with `Authorization: Bearer $TOLLGATE_TOKEN`); the answer is the same
// JSON the command prints ({} to allow). ?timeout=SECONDS is the hook's
// timeout, as --install writes it.
const HookRoute = "POST /v1/hooks/claude-code"

// HTTPHandler serves HookRoute for the tollgate at endpoint (the app hands
// it an in-process endpoint: the gate is asked like any harness asks it, so
// the rules are the same).
func HTTPHandler(home string, endpoint func() client.Endpoint, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, err := io.ReadAll(io.LimitReader(r.Body, hookio.MaxInput+1))
		if err == nil && len(b) > hookio.MaxInput {
			err = fmt.Errorf("body longer than %d bytes", hookio.MaxInput)
		}
		var in hookInput
		if err == nil {
			in, err = decodeClaudeHookInput(b)
		}
		if err != nil {
			// Malformed input allows the compaction, as the command does.
			log.Warn("Claude Code HTTP hook: malformed input; allowing the compaction", "err", err)
			io.WriteString(w, "{}\n")
			return
		}
		timeout := defaultClaudeHookTimeout
		if s, err := strconv.ParseFloat(r.URL.Query().Get("timeout"), 64); err == nil && s > 0 {
			timeout = time.Duration(s * float64(time.Second))
		}
		c := client.New(endpoint(), log)
		if in.HookEventName == claudePostCompact {
			if err := reportClaudeCompaction(r.Context(), c, in); err != nil {
				log.Warn("Claude Code HTTP hook: reporting the compaction's outcome", "err", err)
			}
			io.WriteString(w, "{}\n")
			return
		}
		v := decideClaudePreCompact(r.Context(), c, in, Options{Home: home, Timeout: timeout, Profile: r.URL.Query().Get("profile"),
			Getenv: func(string) string { return "" }, Log: log})
		w.Write(claudeOutput(v))
	})
}
