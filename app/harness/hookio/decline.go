package hookio

import (
	"fmt"
	"io"

	"tollgate/guard/api"
)

// Input reads and decodes a hook's stdin with decode. On failure it says
// so on stderr and reports false: a hook that cannot read its input allows
// the compaction (fails open). what names the input in the note
// ("PreCompact hook input").
func Input(stdin io.Reader, stderr io.Writer, what string, decode func([]byte) error) bool {
	b, err := Read(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "tollgate: reading the hook input:", err, "— allowing the compaction")
		return false
	}
	if err := decode(b); err != nil {
		fmt.Fprintln(stderr, "tollgate: malformed "+what+":", err, "— allowing the compaction")
		return false
	}
	return true
}

// Declined is the first sentences of what a harness shows when tollgate
// declines its compaction: why, and what the compaction would have cost.
// muted names the span a decline mutes ("this turn", "this prompt");
// noOne is said when nobody can answer (each harness's way on).
func Declined(d api.Decision, muted, noOne string) string {
	var why string
	switch d.Reason {
	case api.ReasonUser:
		why = "you chose Not now"
	case api.ReasonTimeout:
		why = "nobody answered before the hook's deadline"
	case api.ReasonMuted:
		why = "declined earlier in " + muted
	case api.ReasonNoQuestionProvider:
		why = "nobody can answer (no tollgate window or browser UI is open)" + noOne
	default:
		why = d.Reason
		if d.Message != "" {
			why += ": " + d.Message
		}
	}
	msg := "tollgate declined the compaction (" + why + ")."
	if d.Quote != nil && d.Quote.ColdTokens > 0 {
		msg += fmt.Sprintf(" It would re-read %d tokens uncached (break premium $%.4f).", d.Quote.ColdTokens, d.Quote.CostUSD.BreakPremium)
	}
	return msg
}

// Allowed is what a harness shows when tollgate allows its compaction: who
// or what allowed it.
func Allowed(d api.Decision) string {
	var why string
	switch d.Reason {
	case api.ReasonUser:
		why = "you chose Allow"
	case api.ReasonAuto:
		why = "mode: auto"
	case api.ReasonOff:
		why = "the guard is off"
	case api.ReasonManual:
		why = "a manual compaction, allowed without asking"
	case api.ReasonUnguarded:
		return "tollgate could not be asked: the compaction runs unguarded."
	default:
		why = d.Reason
		if d.Message != "" {
			why += ": " + d.Message
		}
	}
	return "tollgate allowed the compaction (" + why + ")."
}

// Unguarded is what a harness shows when tollgate is not running: the
// compaction goes on as the harness ships.
const Unguarded = "tollgate is not running: the compaction runs unguarded."
