package telemetry_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"tollgate/app"
	"tollgate/app/apptest"
	"tollgate/guard/client/clienttest"
)

// importTranscript imports the real transcript under its session's name,
// through the UI's Import (POST /v1/import with paths).
func importTranscript(t *testing.T, svc *app.Service) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "4897f198-fe19-43da-991d-b640a926e928.jsonl")
	if err := os.WriteFile(path, readShared(t, "claude-code-2.1.332-transcript.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"paths": []string{path}, "harness": "claude-code"})
	// Importing is the owner's (the harness token of api.json may not).
	if res, raw := clienttest.Do(t, http.MethodPost, svc.URL+"/v1/import", svc.OwnerToken(), body, "Content-Type", "application/json"); res.StatusCode != http.StatusOK {
		t.Fatalf("import: %d %s", res.StatusCode, raw)
	}
}

// withoutUUID drops the assistant_response events: the match must then
// rest on session, time and token figures alone.
func withoutUUID(t *testing.T, body []byte) []byte {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(l plog.LogRecord) bool {
		return l.Body().Str() == "claude_code.assistant_response"
	})
	b, _ := req.MarshalJSON()
	return b
}

// A request received live and the same request imported later from the
// transcript (or imported first, then received) is one request — by the
// transcript line's uuid when the assistant_response event names it, by
// session, time and figures when it does not; and importing again, or a
// retried export, still adds nothing.
func TestLiveAndImportedAreOneRequest(t *testing.T) {
	events := readShared(t, "claude-code-2.1.332-logs.json")
	for _, c := range []struct {
		name       string
		events     []byte
		importHead bool
	}{
		{"live then import, by uuid", events, false},
		{"import then live, by uuid", events, true},
		{"live then import, by figures", withoutUUID(t, events), false},
		{"import then live, by figures", withoutUUID(t, events), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, _ := apptest.Start(t, "")
			live := func() {
				if st, raw := send(t, svc, "/otlp/v1/logs", "application/json", c.events); st != http.StatusOK {
					t.Fatalf("OTLP: %d %s", st, raw)
				}
			}
			if c.importHead {
				importTranscript(t, svc)
				live()
			} else {
				live()
				importTranscript(t, svc)
			}
			first := session(t, svc, realSession)
			if first.Requests != 1 || first.Tokens.Input != 21546 || first.Tokens.Output != 8 {
				t.Fatalf("%+v", first)
			}
			// Again, both ways.
			importTranscript(t, svc)
			live()
			if s := session(t, svc, realSession); s.Requests != 1 || s.CostUSD != first.CostUSD || s.Tokens != first.Tokens {
				t.Fatalf("after repeating both: %+v", s)
			}
			if n := sessionCount(t, svc); n != 1 {
				t.Fatalf("%d sessions", n)
			}
			var uuid string
			if err := svc.DB.SQL().QueryRow(`SELECT message_uuid FROM requests`).Scan(&uuid); err != nil {
				t.Fatal(err)
			}
			if uuid != realUUID {
				t.Fatalf("stored uuid %q, want the transcript line's %s", uuid, realUUID)
			}
		})
	}
}

// split cuts the real export in two: everything up to the api_request in
// the first, the assistant_response in the second (the SDK's batch ended
// between them).
func split(t *testing.T, body []byte) ([]byte, []byte) {
	t.Helper()
	first, second := plogotlp.NewExportRequest(), plogotlp.NewExportRequest()
	if err := first.UnmarshalJSON(body); err != nil {
		t.Fatal(err)
	}
	second.UnmarshalJSON(body)
	first.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(l plog.LogRecord) bool {
		return l.Body().Str() == "claude_code.assistant_response"
	})
	second.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().RemoveIf(func(l plog.LogRecord) bool {
		return l.Body().Str() != "claude_code.assistant_response"
	})
	a, _ := first.MarshalJSON()
	b, _ := second.MarshalJSON()
	return a, b
}

// The response naming the transcript line may come in the export after
// its request's: the stored request still takes the uuid, and the import
// then matches it exactly.
func TestResponseInALaterExportLinksItsRequest(t *testing.T) {
	first, second := split(t, readShared(t, "claude-code-2.1.332-logs.json"))
	svc, _ := apptest.Start(t, "")
	for _, b := range [][]byte{first, second} {
		if st, raw := send(t, svc, "/otlp/v1/logs", "application/json", b); st != http.StatusOK {
			t.Fatalf("%d %s", st, raw)
		}
	}
	var uuid, twin string
	if err := svc.DB.SQL().QueryRow(`SELECT message_uuid FROM requests`).Scan(&uuid); err != nil || uuid != realUUID {
		t.Fatalf("uuid %q %v, want %s", uuid, err, realUUID)
	}
	importTranscript(t, svc)
	if err := svc.DB.SQL().QueryRow(`SELECT twin FROM requests`).Scan(&twin); err != nil || twin == "" {
		t.Fatalf("twin %q %v", twin, err)
	}
	if s := session(t, svc, realSession); s.Requests != 1 {
		t.Fatalf("%+v", s)
	}
}
