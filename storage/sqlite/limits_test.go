package sqlite

import (
	"context"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// A session's window and threshold come from what the harness said (its
// hook, over the API): the defaults an import or the telemetry assume for
// the model fill a session that has none, and never replace what the hook
// said, in whichever order the paths arrive.
func TestSaidLimitsOutliveAssumedOnes(t *testing.T) {
	ctx := context.Background()
	said := storage.SessionMeta{ContextWindow: 100_000, ThresholdTokens: 48_000}
	assumed := storage.SessionMeta{ContextWindow: 200_000, ThresholdTokens: 167_000, LimitsAssumed: true}
	record := func(db *DB, session, id string, m storage.SessionMeta, via string, at time.Time) {
		t.Helper()
		m.ID, m.Harness, m.Provider, m.Model = session, "claude-code", "anthropic", "claude-opus-5-5"
		r := storage.Request{Session: m, RequestID: id, At: at, Purpose: storage.PurposeConversation, Usage: pricing.Usage{Input: 10, Output: 1},
			Cost: pricing.Cost{Total: 0.001}, PricedBy: "profile", Via: via}
		if via == storage.ViaImport {
			if _, err := db.StoreImport(ctx, ImportBatch{To: ImportState{Path: session + id, Harness: "claude-code", SessionID: session, Size: 1, Offset: 1, HeadHash: "1:x", State: `{"lines":1}`},
				Items: []ImportItem{{Request: &r}}}); err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := db.RecordRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	limits := func(db *DB, session string) (int64, int64) {
		t.Helper()
		s, err := db.Session(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		return s.ContextWindow, s.ThresholdTokens
	}
	for _, order := range [][]string{{"hook", "import", "otlp"}, {"import", "hook", "otlp"}, {"otlp", "import", "hook"}} {
		db := openTest(t)
		for i, path := range order {
			at := t0.Add(time.Duration(i) * time.Minute)
			switch path {
			case "hook":
				record(db, "s", "h", said, "", at)
			case "import":
				record(db, "s", "m", assumed, storage.ViaImport, at)
			case "otlp":
				record(db, "s", "o", assumed, storage.ViaOTLP, at)
			}
		}
		if w, th := limits(db, "s"); w != said.ContextWindow || th != said.ThresholdTokens {
			t.Errorf("%v: window %d, threshold %d; want the hook's %d, %d", order, w, th, said.ContextWindow, said.ThresholdTokens)
		}
	}
	// Without the hook, the assumed ones are the session's.
	db := openTest(t)
	record(db, "s", "m", assumed, storage.ViaImport, t0)
	if w, th := limits(db, "s"); w != assumed.ContextWindow || th != assumed.ThresholdTokens {
		t.Errorf("import alone: window %d, threshold %d", w, th)
	}
}

// TakeLimits, the rule the group writer folds a transaction's requests
// with, agrees with the row's update: said replaces assumed, never the
// other way.
func TestTakeLimits(t *testing.T) {
	said := storage.SessionMeta{ContextWindow: 100_000, ThresholdTokens: 48_000}
	assumed := storage.SessionMeta{ContextWindow: 200_000, ThresholdTokens: 167_000, LimitsAssumed: true}
	m := assumed
	m.TakeLimits(said)
	if m.ContextWindow != 100_000 || m.LimitsAssumed {
		t.Fatalf("said after assumed: %+v", m)
	}
	m.TakeLimits(assumed)
	if m.ContextWindow != 100_000 || m.ThresholdTokens != 48_000 {
		t.Fatalf("assumed after said: %+v", m)
	}
	var none storage.SessionMeta
	none.TakeLimits(assumed)
	if none.ContextWindow != 200_000 || !none.LimitsAssumed {
		t.Fatalf("assumed into none: %+v", none)
	}
}
