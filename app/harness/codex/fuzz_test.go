package codex

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"tollgate/app/harness/codex/cxlog"
	"tollgate/app/importer"
)

// Every reader of outside input here has a fuzz target: the hook's stdin,
// hooks.json, config.toml and the rollout. Seeds live in testdata/fuzz.

func FuzzDecodeHookInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","turn_id":"t","transcript_path":"/r.jsonl","cwd":"/w","hook_event_name":"PreCompact","model":"gpt-5.2-codex","trigger":"auto"}`))
	f.Add([]byte(`{"session_id":"s","turn_id":"t","transcript_path":null,"hook_event_name":"PostCompact","trigger":"manual","agent_id":"a"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeHookInput(b)
		if err != nil {
			return
		}
		if strings.TrimSpace(in.SessionID) == "" || len(in.SessionID) > 256 || in.HookEventName != codexPreCompact && in.HookEventName != codexPostCompact ||
			in.Trigger != "auto" && in.Trigger != "manual" {
			t.Fatalf("accepted %q as %+v", b, in)
		}
	})
}

// FuzzHooksFile: whatever hooks.json holds, a file that decodes takes
// tollgate's hooks and gives them back, and every other handler survives.
func FuzzHooksFile(f *testing.F) {
	f.Add([]byte(userHooks))
	f.Add([]byte(`{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"/x/tollgate hook codex --timeout 9"}]}]}}`))
	f.Add([]byte(`{"hooks":{"PostCompact":[{"matcher":1,"hooks":[null,{"command":3}]}]}}`))
	f.Add([]byte(`{"hooks":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := decodeHooksFile("hooks.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "hooks.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		others := handlerCount(file) - len(tollgateKeys("/h/hooks.json", file))
		file = withTollgateHooks(file, "/bin/tollgate hook codex --timeout 300", 300)
		out, err := marshalHooks(file)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeHooksFile("hooks.json", out)
		if err != nil {
			t.Fatalf("tollgate wrote a hooks.json it cannot read: %v\n%s", err, out)
		}
		if keys := tollgateKeys("/h/hooks.json", again); len(keys) != 2 {
			t.Fatalf("keys %+v", keys)
		}
		if n := handlerCount(again) - 2; n != others {
			t.Fatalf("%d other handlers, had %d", n, others)
		}
		if rest := withoutTollgateHooks(again); handlerCount(rest) != others || len(tollgateKeys("/h/hooks.json", rest)) != 0 {
			t.Fatalf("uninstall left %d handlers, want %d", handlerCount(rest), others)
		}
	})
}

// handlerCount counts the handler objects under the events tollgate edits.
func handlerCount(f map[string]any) int {
	n := 0
	events, _ := f["hooks"].(map[string]any)
	for _, e := range codexEvents {
		groups, _ := events[e.name].([]any)
		for _, g := range groups {
			group, _ := g.(map[string]any)
			list, _ := group["hooks"].([]any)
			n += len(list)
		}
	}
	return n
}

// FuzzConfigTrust: for any config.toml that parses, adding tollgate's
// trust either refuses or yields a file that parses and holds it; removing
// it again leaves no trust at that key.
func FuzzConfigTrust(f *testing.F) {
	f.Add(userConfig)
	f.Add("[hooks]\nstate = { }\n")
	f.Add("[hooks.state.\"/h/hooks.json:pre_compact:0:0\"] # old\ntrusted_hash = \"x\"\nenabled = false\n")
	f.Add("a = '''\n[hooks.state.\"/h/hooks.json:pre_compact:0:0\"]\n'''\n")
	f.Fuzz(func(t *testing.T, text string) {
		if _, err := parseConfig("config.toml", text); err != nil {
			return
		}
		want := []hookKey{{event: codexPreCompact, key: "/h/hooks.json:pre_compact:0:0", hash: "sha256:abc"}}
		out, err := withTrust(text, map[string]bool{}, want, nil, "config.toml")
		if err != nil {
			return
		}
		if _, err := parseConfig("config.toml", out); err != nil {
			t.Fatalf("wrote a config.toml that does not parse: %v\n%s", err, out)
		}
		if trustedHash(out, want[0].key) != "sha256:abc" {
			t.Fatalf("trust not written:\n%s", out)
		}
		back, err := withTrust(out, map[string]bool{want[0].key: true}, nil, nil, "config.toml")
		if err != nil {
			t.Fatalf("removing: %v\n%s", err, out)
		}
		if trustedHash(back, want[0].key) != "" {
			t.Fatalf("trust left behind:\n%s", back)
		}
	})
}

// FuzzRollout: any bytes as a live rollout give a surface the API accepts.
func FuzzRollout(f *testing.F) {
	f.Add([]byte(testRollout(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))))
	f.Add([]byte(`{"timestamp":"2026-12-01T09:00:00Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":-5,"cached_input_tokens":9}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := importer.Parse(bytes.NewReader(b), importer.Options{Harness: cxlog.Name, Path: "rollout.jsonl", AtEOF: true, Live: true})
		if err != nil {
			return
		}
		ro := newRollout(res)
		if err := ro.measure(context.Background(), bytes.NewReader(b), "rollout.jsonl"); err != nil {
			return
		}
		envelope, units, pending := ro.surface()
		seen := map[string]bool{}
		for _, u := range units {
			if u.Tokens <= 0 || seen[u.ID] {
				t.Fatalf("unit %+v (duplicate %v)", u, seen[u.ID])
			}
			seen[u.ID] = true
		}
		if envelope < 0 || pending < 0 || ro.keptTokens() < 0 || ro.keptTokens() > codexKeptUserTokens {
			t.Fatalf("envelope %d pending %d kept %d", envelope, pending, ro.keptTokens())
		}
	})
}
