package app

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"

	"tollgate/app/config"
	"tollgate/guard/api"
	"tollgate/guard/client/clienttest"
)

// apiCall sends an authenticated request to a running service.
func apiCall(t *testing.T, svc *Service, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	tok := svc.Token()
	if svc.Server.NeedsOwner(httptest.NewRequest(method, path, nil)) {
		tok = svc.OwnerToken() // the permission table is TestPermissionTable's
	}
	res, raw := clienttest.Do(t, method, svc.URL+path, tok, body)
	if out != nil && res.StatusCode/100 == 2 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return res.StatusCode, raw
}

// config.Settings through the API: a price edit lands in config.yaml with its
// spelling and comments, new requests use it, history keeps the old price
// until re-priced, and a bad value names the key and changes nothing.
func TestProfilesSettingsAndRepriceThroughTheAPI(t *testing.T) {
	dir := t.TempDir()
	svc := startTestService(t, dir)
	defer svc.Close(context.Background())

	var page config.ProfilesPage
	if code, raw := apiCall(t, svc, "GET", "/v1/profiles", nil, &page); code != 200 || len(page.Profiles) != 1 || page.Profiles[0].Name != "deepseek-flash" || len(page.Builtins) == 0 {
		t.Fatalf("profiles: %d %s", code, raw)
	}

	record := func(id string) api.RecordedRequest {
		var rec api.RecordedRequest
		// 02:00 UTC on a Monday: DeepSeek's peak window, so the full price
		// applies whatever time the test runs.
		code, raw := apiCall(t, svc, "POST", "/v1/sessions/s1/requests", map[string]any{
			"requestId": id, "profile": "deepseek-flash", "at": "2026-11-30T02:00:00Z", "usage": map[string]int64{"inputTokens": 1_000_000},
		}, &rec)
		if code != 201 {
			t.Fatalf("record: %d %s", code, raw)
		}
		return rec
	}
	before := record("a")
	if before.PricedBy != "profile" {
		t.Fatalf("priced by %q", before.PricedBy)
	}

	var view config.ProfileView
	if code, raw := apiCall(t, svc, "PUT", "/v1/profiles/deepseek-flash", map[string]any{"pricePerMTokens": 7.5, "outputPricePerMTokens": 9}, &view); code != 200 {
		t.Fatalf("put profile: %d %s", code, raw)
	}
	if view.Model.PricePerMTokens != 7.5 {
		t.Fatalf("view after edit: %+v", view)
	}
	file, _ := os.ReadFile(svc.Config.File)
	if !strings.Contains(string(file), "pricePerMTokens: 7.5") || !strings.Contains(string(file), "# Loopback address") {
		t.Fatalf("config.yaml after the edit:\n%s", file)
	}
	after := record("b")
	if math.Abs(after.CostUSD-7.5) > 1e-9 {
		t.Fatalf("a new request costs %v, want 7.5 (1M uncached tokens at the new price)", after.CostUSD)
	}

	// A bad value: 400 naming the key, the file untouched.
	code, raw := apiCall(t, svc, "PUT", "/v1/profiles/deepseek-flash", map[string]any{"pricePerMTokens": 1, "granularity": -64}, nil)
	if code != 400 || !strings.Contains(string(raw), "profiles.deepseek-flash.granularity") {
		t.Fatalf("bad value: %d %s", code, raw)
	}
	if again, _ := os.ReadFile(svc.Config.File); !bytes.Equal(again, file) {
		t.Fatal("a refused edit changed config.yaml")
	}
	if code, raw := apiCall(t, svc, "PUT", "/v1/settings", map[string]any{"askTimeout": "45s"}, nil); code != 200 {
		t.Fatalf("settings: %d %s", code, raw)
	}
	if svc.Settings().AskTimeout().Seconds() != 45 {
		t.Fatal("askTimeout not live")
	}
	if code, _ := apiCall(t, svc, "PUT", "/v1/settings", map[string]any{"askTimeout": "soon"}, nil); code != 400 {
		t.Fatalf("bad askTimeout: %d", code)
	}

	// History keeps the price it was billed at until re-priced.
	var s api.Session
	apiCall(t, svc, "GET", "/v1/sessions/s1", nil, &s)
	if math.Abs(s.CostUSD-(before.CostUSD+7.5)) > 1e-9 {
		t.Fatalf("session cost %v before re-pricing", s.CostUSD)
	}
	var rp map[string]int64
	if code, raw := apiCall(t, svc, "POST", "/v1/reprice", map[string]any{}, &rp); code != 200 || rp["requests"] != 2 {
		t.Fatalf("reprice: %d %s", code, raw)
	}
	apiCall(t, svc, "GET", "/v1/sessions/s1", nil, &s)
	if math.Abs(s.CostUSD-15) > 1e-9 {
		t.Fatalf("session cost %v after re-pricing, want 15", s.CostUSD)
	}

	// Export both ways, then delete.
	code, raw = apiCall(t, svc, "GET", "/v1/sessions/s1/export?format=csv", nil, nil)
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if code != 200 || err != nil || len(rows) != 3 || rows[0][1] != "requestId" {
		t.Fatalf("csv export: %d %v %q", code, err, raw)
	}
	var exp struct {
		Sessions []api.Session            `json:"sessions"`
		Requests []api.ExportedRequest    `json:"requests"`
		Rewrites []map[string]interface{} `json:"rewrites"`
	}
	if code, raw := apiCall(t, svc, "GET", "/v1/export?format=json", nil, &exp); code != 200 || len(exp.Sessions) != 1 || len(exp.Requests) != 2 {
		t.Fatalf("json export: %d %s", code, raw)
	}
	if code, _ := apiCall(t, svc, "DELETE", "/v1/sessions", nil, nil); code != 400 {
		t.Fatalf("delete everything without confirm: %d", code)
	}
	if code, _ := apiCall(t, svc, "DELETE", "/v1/sessions/s1", nil, nil); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := apiCall(t, svc, "GET", "/v1/sessions/s1", nil, nil); code != 404 {
		t.Fatalf("deleted session: %d", code)
	}
}

func TestSpendThroughTheAPIInTheUsersTimeZone(t *testing.T) {
	svc := startTestService(t, t.TempDir())
	defer svc.Close(context.Background())
	apiCall(t, svc, "POST", "/v1/sessions/s/requests", map[string]any{"requestId": "1", "usage": map[string]int64{"cacheReadTokens": 1000, "outputTokens": 10}}, nil)
	var sp api.Spend
	if code, raw := apiCall(t, svc, "GET", "/v1/spend?by=day&tz=America/New_York", nil, &sp); code != 200 || len(sp.Rows) != 1 || sp.TZ != "America/New_York" {
		t.Fatalf("spend: %d %s", code, raw)
	}
	if code, raw := apiCall(t, svc, "GET", "/v1/spend?tz=Mars/Olympus", nil, nil); code != 400 || !strings.Contains(string(raw), "tz") {
		t.Fatalf("bad tz: %d %s", code, raw)
	}
}

func uploadImport(t *testing.T, svc *Service, name string, content []byte) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.WriteField("harness", "claude-code")
	mw.Close()
	res, raw := clienttest.Do(t, "POST", svc.URL+"/v1/import", svc.OwnerToken(), &body, "Content-Type", mw.FormDataContentType())
	var out map[string]any
	json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

// The UI's Import: an upload is imported (progress events meanwhile); a
// malformed file answers 400 naming the file and line and stores nothing.
func TestImportThroughTheAPI(t *testing.T) {
	svc := startTestService(t, t.TempDir())
	defer svc.Close(context.Background())
	line := func(i int, id string) string {
		return `{"type":"assistant","sessionId":"abc","uuid":"u` + strconv.Itoa(i) + `","timestamp":"2026-11-30T10:00:0` + strconv.Itoa(i) + `Z","requestId":"req` + strconv.Itoa(i) +
			`","message":{"id":"` + id + `","model":"claude-sonnet-4-5-20250929","role":"assistant","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":5}}}` + "\n"
	}
	good := []byte(line(1, "msg_1") + line(2, "msg_2"))
	code, out := uploadImport(t, svc, "abc.jsonl", good)
	if code != 200 {
		t.Fatalf("upload: %d %v", code, out)
	}
	res := out["result"].(map[string]any)
	if res["requests"].(float64) != 2 {
		t.Fatalf("result %v", res)
	}
	bad := []byte(line(1, "msg_9") + "{not json\n")
	code, out = uploadImport(t, svc, "broken.jsonl", bad)
	msg, _ := out["error"].(map[string]any)
	if code != 400 || !strings.Contains(fmt.Sprint(msg["message"]), "broken.jsonl") || !strings.Contains(fmt.Sprint(msg["message"]), "2") {
		t.Fatalf("malformed upload: %d %v", code, out)
	}
	var n int
	svc.DB.SQL().QueryRow("SELECT COUNT(*) FROM requests").Scan(&n)
	if n != 2 {
		t.Fatalf("%d requests stored, want the good file's 2 only", n)
	}
	if code, raw := apiCall(t, svc, "POST", "/v1/import", map[string]any{"paths": []string{"relative/x.jsonl"}}, nil); code != 400 || !strings.Contains(string(raw), "paths[0]") {
		t.Fatalf("relative path: %d %s", code, raw)
	}
}
