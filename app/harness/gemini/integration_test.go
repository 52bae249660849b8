package gemini

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"tollgate/app/harness"
	"tollgate/app/home"
	"tollgate/guard/api"
)

// Gemini CLI is listed whether or not it is seen, always with why it cannot
// be gated; once a chats folder exists it is observed — and never installed
// or verified, so it never arms the guard.
func TestGeminiObservedNeverArms(t *testing.T) {
	dir, userHome := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": userHome}
	probe := home.Probe{Home: dir, Getenv: func(k string) string { return env[k] }}
	gemini := func() api.Integration {
		for _, in := range harness.IntegrationsFor(probe) {
			if in.Name == Harness {
				return in
			}
		}
		t.Fatal("Gemini CLI is not listed")
		return api.Integration{}
	}
	in := gemini()
	if in.State != "" || in.Installed || in.Verified || !strings.HasPrefix(in.Detail, "not seen: ") ||
		!strings.Contains(in.Note, "PreCompress hook is advisory") || !strings.Contains(in.Note, "masks old tool outputs") {
		t.Fatalf("not seen: %+v", in)
	}
	// A tmp folder without chats (Gemini CLI ran, wrote no session) is not a session.
	os.MkdirAll(filepath.Join(userHome, ".gemini", "tmp", "proj"), 0o755)
	if in := gemini(); in.State != "" {
		t.Fatalf("no chats yet: %+v", in)
	}
	os.MkdirAll(filepath.Join(userHome, ".gemini", "tmp", "proj", "chats"), 0o755)
	in = gemini()
	if in.State != api.IntegrationObserved || in.Installed || in.Verified || !strings.Contains(in.Detail, filepath.Join(userHome, ".gemini")) {
		t.Fatalf("observed: %+v", in)
	}
	// GEMINI_CLI_HOME stands for the home folder.
	other := t.TempDir()
	env["GEMINI_CLI_HOME"] = other
	if in := gemini(); in.State != "" {
		t.Fatalf("GEMINI_CLI_HOME without sessions: %+v", in)
	}
	os.MkdirAll(filepath.Join(other, ".gemini", "tmp", "p2", "chats"), 0o755)
	if in := gemini(); in.State != api.IntegrationObserved {
		t.Fatalf("GEMINI_CLI_HOME with sessions: %+v", in)
	}
}
