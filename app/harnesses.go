package app

import (
	"net/http"

	"tollgate/app/harness"
	"tollgate/app/importer"
	"tollgate/guard/api"
)

// harnessesRoute lists every harness tollgate knows, for the UI: it names
// and labels harnesses from it (the history banner's "412 Claude Code
// sessions", the Data page's upload) and never from a list of its own.
const harnessesRoute = "GET /v1/harnesses"

// harnessList is every harness tollgate knows: the registered integrations
// in their Order, then the log formats that have no integration in theirs.
// A harness with both takes its label from its integration, and how its
// logs are read from its format.
func harnessList() api.HarnessList {
	out := []api.Harness{}
	at := map[string]int{}
	for _, in := range harness.Registered() {
		at[in.Name] = len(out)
		out = append(out, api.Harness{Name: in.Name, Label: in.Label, Aliases: in.Aliases, Gated: !in.Observed, Decline: in.Decline})
	}
	for _, f := range importer.Formats() {
		logs := api.HarnessLogLines
		if f.Database != nil {
			logs = api.HarnessLogDatabase
		}
		if i, ok := at[f.Name]; ok {
			out[i].Logs = logs
			continue
		}
		out = append(out, api.Harness{Name: f.Name, Label: f.Label, Logs: logs})
	}
	return api.HarnessList{Harnesses: out}
}

// harnessesHandler serves harnessList. The harnesses register from init
// functions, so the list is built once.
func harnessesHandler() http.Handler {
	list := harnessList()
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		api.WriteJSON(w, http.StatusOK, list)
	})
}
