package app

import (
	"context"
	"slices"
	"testing"

	"tollgate/app/harness"
	"tollgate/app/importer"
	"tollgate/guard/api"
)

// GET /v1/engines names and describes every registered harness the way the
// Integrations page shows it: its label, heading, paragraph and setup
// snippet, from the registry, in the registry's order.
func TestEnginesIntegrationsCarryTheRegistrysTexts(t *testing.T) {
	svc := startTestService(t, t.TempDir())
	t.Cleanup(func() { svc.Close(context.Background()) })
	var list struct {
		Integrations []api.Integration `json:"integrations"`
	}
	if code, raw := apiCall(t, svc, "GET", "/v1/engines", nil, &list); code != 200 {
		t.Fatalf("GET /v1/engines: %d %s", code, raw)
	}
	reg := harness.Registered()
	if len(list.Integrations) != len(reg) || len(reg) < 6 {
		t.Fatalf("%d integrations, %d registered", len(list.Integrations), len(reg))
	}
	for i, in := range reg {
		got := list.Integrations[i]
		if got.Name != in.Name || got.Label != in.Label || got.Title != in.Title || got.About != in.About || got.Setup != in.Setup {
			t.Errorf("entry %d: %+v, want %s's label %q, title %q, about and setup from the registry", i, got, in.Name, in.Label, in.Title)
		}
		if got.Label == "" || got.Title == "" || got.About == "" || got.Setup == "" {
			t.Errorf("%s: label %q, title %q, about %q, setup %q: the Integrations page needs all four", in.Name, got.Label, got.Title, got.About, got.Setup)
		}
	}
}

// GET /v1/harnesses lists every registered integration in its order, then
// every log format without one; each with its label, its aliases, whether
// it is gated and how its logs are read.
func TestHarnessesListEveryIntegrationAndFormat(t *testing.T) {
	svc := startTestService(t, t.TempDir())
	t.Cleanup(func() { svc.Close(context.Background()) })
	var got api.HarnessList
	if code, raw := apiCall(t, svc, "GET", "/v1/harnesses", nil, &got); code != 200 {
		t.Fatalf("GET /v1/harnesses: %d %s", code, raw)
	}
	var want []string
	for _, in := range harness.Registered() {
		want = append(want, in.Name)
	}
	for _, f := range importer.Formats() {
		if !slices.Contains(want, f.Name) {
			want = append(want, f.Name)
		}
	}
	var names []string
	for _, h := range got.Harnesses {
		names = append(names, h.Name)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("harnesses %v, want %v", names, want)
	}
	gated, lines := 0, 0
	for _, h := range got.Harnesses {
		in, isIntegration := harness.Lookup(h.Name)
		f, isFormat := importer.Lookup(h.Name)
		switch {
		case h.Label == "":
			t.Errorf("%s has no label", h.Name)
		case isIntegration && h.Label != in.Label, !isIntegration && h.Label != f.Label:
			t.Errorf("%s: label %q", h.Name, h.Label)
		case isIntegration && isFormat && in.Label != f.Label:
			// The UI names a harness by one label whichever list it reads.
			t.Errorf("%s: integration label %q, format label %q", h.Name, in.Label, f.Label)
		}
		if h.Gated != (isIntegration && !in.Observed) {
			t.Errorf("%s: gated %v", h.Name, h.Gated)
		}
		if h.Gated {
			gated++
		}
		for _, a := range h.Aliases {
			if other, ok := harness.Lookup(a); !ok || other.Name != h.Name {
				t.Errorf("%s: alias %q is not its", h.Name, a)
			}
		}
		want := ""
		switch {
		case isFormat && f.Database != nil:
			want = api.HarnessLogDatabase
		case isFormat:
			want = api.HarnessLogLines
			lines++
		}
		if h.Logs != want {
			t.Errorf("%s: logs %q, want %q", h.Name, h.Logs, want)
		}
		if isIntegration && h.Decline != in.Decline {
			t.Errorf("%s: decline %q", h.Name, h.Decline)
		}
	}
	if gated == 0 || gated == len(got.Harnesses) || lines == 0 {
		t.Fatalf("%d gated, %d with log files, of %+v", gated, lines, got.Harnesses)
	}
}
