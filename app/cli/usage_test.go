package cli

import (
	"strings"
	"testing"

	"tollgate/app/harness"
	"tollgate/app/importer"
)

// The top-level usage names every registered harness where it takes one,
// from the registries.
func TestUsageNamesTheRegisteredHarnesses(t *testing.T) {
	got := Usage("import [--harness {harnesses}]\nhook {hook}\next {ext}\ntelemetry {telemetry}")
	if strings.Contains(got, "{") {
		t.Fatalf("a placeholder is left: %q", got)
	}
	if want := "import [--harness " + strings.Join(importer.Harnesses(), "|") + "]"; !strings.Contains(got, want) {
		t.Errorf("%q lacks %q", got, want)
	}
	for _, in := range harness.Registered() {
		if in.Hook != nil && !strings.Contains(got, in.Name) {
			t.Errorf("%q does not name %s's hook", got, in.Name)
		}
	}
}
