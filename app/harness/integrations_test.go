package harness

import (
	"strings"
	"testing"
	"time"

	"tollgate/app/home"
)

func TestIntegrationsDSHSeenAndCodexNotInstalled(t *testing.T) {
	dir := t.TempDir()
	env := home.Probe{Home: dir, Getenv: func(k string) string {
		if k == "HOME" {
			return dir
		}
		return ""
	}}
	list := integrationsFor(env)
	if len(list) != 5 || list[2].Installed || list[3].Installed || !strings.Contains(list[3].Detail, "hook codex --install") || !strings.Contains(list[3].Detail, "ends the current Codex turn") {
		t.Fatalf("%+v", list)
	}
	for _, in := range list {
		if in.Verified {
			t.Fatalf("nothing installed, yet %s is verified", in.Name)
		}
	}
	home.WriteMarker(dir, DSH, home.Marker{At: time.Now(), LastDecision: "decline (user)", Version: "0.9.0"})
	list = integrationsFor(env)
	if d := list[2]; !d.Installed || d.Verified || !strings.Contains(d.Detail, "dsh 0.9.0") || !strings.HasPrefix(d.LastDecision, "decline (user)") {
		t.Fatalf("dsh %+v", d)
	}
}
