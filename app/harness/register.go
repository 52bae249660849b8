package harness

import (
	"cmp"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"tollgate/app/home"
	"tollgate/guard/api"
	"tollgate/guard/client"
)

// An Integration is one harness's integration with tollgate: everything
// the Integrations page, GET /v1/engines, doctor, the API and the commands
// (`tollgate hook|ext|telemetry NAME`) ask of it. A harness folder
// (app/harness/<name>) registers its Integration from an init function, as
// an image format registers with image.RegisterFormat; app/harness/all
// links every folder into the binary, and the generic rooms loop over
// Registered without importing a harness folder.
type Integration struct {
	// Name is the harness's name, as sessions.harness stores it and the
	// commands take it ("claude-code").
	Name string
	// Label is how doctor and messages name it ("Claude Code"); "" is Name.
	Label string
	// Title is its heading on the Integrations page, the harness's full
	// name ("DeepSeek-Reasonix"); "" is Label.
	Title string
	// Aliases are other names the commands take for it ("claude"), and
	// other harness names its engines register under
	// ("deepseek-reasonix"): the Integrations page counts those engines as
	// this harness's.
	Aliases []string
	// About is the Integrations page's paragraph on it: what tollgate does
	// with the harness and how it guards it. Setup is the page's
	// copy-ready snippet that sets it up ("" when there is none).
	About string
	Setup string
	// Decline is what the question dialog says a "Not now" does beyond
	// skipping the rewrite, where the harness cannot skip only that (a
	// Codex decline ends the turn); "" when a decline skips only the
	// rewrite.
	Decline string
	// Observed says tollgate imports and prices its sessions but nothing
	// it runs can hold a rewrite (Gemini CLI): it is never gated.
	Observed bool
	// Order places it in every list of integrations (Registered, GET
	// /v1/engines and the Integrations page, GET /v1/harnesses, doctor,
	// the commands' usage): lowest first.
	Order int
	// Status is its state on this machine (see Integrations): cheap, and
	// never failing (problems go to the entry's detail). Required.
	Status func(home.Probe) api.Integration
	// Doctor says how `tollgate doctor` grades it; nil is its detail as
	// info.
	Doctor *Doctor
	// Hook is `tollgate hook NAME`: its hook command, or the install of
	// what the harness runs itself. nil: none.
	Hook *Command
	// Ext is `tollgate ext NAME`: its extension sidecar. nil: none.
	Ext *Command
	// Telemetry is `tollgate telemetry NAME`: the settings that point its
	// OpenTelemetry export at tollgate. nil: none.
	Telemetry *Command
	// OTel is how its OpenTelemetry export names itself, for the OTLP
	// receiver (app/telemetry). nil: it exports nothing tollgate reads.
	OTel *OTel
	// HookRoute is its HTTP hook on tollgate's API. nil: none.
	HookRoute *Route
}

// Route is a harness's HTTP hook on tollgate's API. The app serves it to
// the harness token too: a hook is a harness calling.
type Route struct {
	// Pattern is a ServeMux pattern: "POST /v1/hooks/claude-code".
	Pattern string
	// Handler serves it for the tollgate whose home is home; endpoint
	// reaches that tollgate in-process, so the gate is asked the way any
	// harness asks it.
	Handler func(home string, endpoint func() client.Endpoint, log *slog.Logger) http.Handler
}

// OTel is how a harness's OpenTelemetry export names its events.
type OTel struct {
	// Namespace prefixes its event names: claude_code in
	// claude_code.api_request. The receiver stores the requests of
	// events in it under the harness's Name.
	Namespace string
	// Service is its resource's service.name where its records can carry
	// a bare event.name, which then gets Namespace ("" when they never do).
	Service string
}

// registered are the integrations by name. They are registered from init
// functions, before any caller reads them, so the map is read without a
// lock.
var registered = map[string]*Integration{}

// Register adds a harness's integration (from an init function). An
// integration without a name or a Status, a name registered twice, or an
// alias taken, panics: it is a program error, not an input one.
func Register(in Integration) {
	switch {
	case in.Name == "" || strings.ContainsAny(in.Name, ": \t|,"):
		panic("harness: integration name " + in.Name + " is empty or holds a colon, a space, a bar or a comma")
	case in.Status == nil:
		panic("harness: integration " + in.Name + " has no Status")
	}
	for _, n := range append([]string{in.Name}, in.Aliases...) {
		if _, taken := Lookup(n); taken {
			panic("harness: integration " + in.Name + ": the name " + n + " is registered twice")
		}
	}
	if in.Label == "" {
		in.Label = in.Name
	}
	if in.Title == "" {
		in.Title = in.Label
	}
	registered[in.Name] = &in
}

// Registered lists the registered integrations in Order (then name).
func Registered() []Integration {
	out := make([]Integration, 0, len(registered))
	for _, in := range registered {
		out = append(out, *in)
	}
	slices.SortFunc(out, func(a, b Integration) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), strings.Compare(a.Name, b.Name))
	})
	return out
}

// Lookup returns the integration registered under name, or under one of
// its aliases.
func Lookup(name string) (Integration, bool) {
	if in, ok := registered[name]; ok {
		return *in, true
	}
	for _, in := range registered {
		if slices.Contains(in.Aliases, name) {
			return *in, true
		}
	}
	return Integration{}, false
}
