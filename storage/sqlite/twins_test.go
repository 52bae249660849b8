package sqlite

import (
	"context"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/storage"
)

// Each witness of one side matches at most one of the other: two live
// requests with the same figures and one import of them leave two rows;
// the second import (of the other request) then matches the other live
// one. A request from the API (no Via) never matches anything.
func TestTwinsMatchOneToOne(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	u := pricing.Usage{Input: 10, CacheRead: 20000, CacheWrite: 300, Output: 40}
	live := func(id string, at time.Time) storage.Request {
		r := req("s", id, at, u, 0.01)
		r.Via = storage.ViaOTLP
		return r
	}
	imported := func(id string, at time.Time) storage.Request {
		r := req("s", id, at, u, 0.01)
		r.Via = storage.ViaImport
		return r
	}
	total := func() int64 {
		var n int64
		if err := db.SQL().QueryRow(`SELECT requests FROM sessions WHERE id = 's'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, r := range []storage.Request{live("otel:a", at), live("otel:b", at.Add(30*time.Second))} {
		if _, err := db.RecordRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st, err := db.RecordRequests(ctx, []storage.Request{imported("msg_1", at.Add(-time.Second))})
	if err != nil || !st[0].Duplicate || st[0].RequestID != "otel:a" {
		t.Fatalf("%+v %v: want the earliest live request", st, err)
	}
	if n := total(); n != 2 {
		t.Fatalf("%d requests", n)
	}
	st, _ = db.RecordRequests(ctx, []storage.Request{imported("msg_2", at.Add(29*time.Second))})
	if !st[0].Duplicate || st[0].RequestID != "otel:b" {
		t.Fatalf("%+v: want the other live request", st)
	}
	// A third import with the same figures has no twin left; one far away
	// in time has none either; an API request is never a twin.
	st, _ = db.RecordRequests(ctx, []storage.Request{imported("msg_3", at.Add(40*time.Second)), imported("msg_4", at.Add(time.Hour))})
	if st[0].Duplicate || st[1].Duplicate {
		t.Fatalf("%+v", st)
	}
	if _, err := db.RecordRequest(ctx, req("s", "api-1", at, u, 0.01)); err != nil {
		t.Fatal(err)
	}
	if n := total(); n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
	// The same witnesses again change nothing.
	st, _ = db.RecordRequests(ctx, []storage.Request{imported("msg_1", at), live("otel:a", at)})
	if !st[0].Duplicate || !st[1].Duplicate || total() != 5 {
		t.Fatalf("%+v, %d", st, total())
	}
}
