package storage

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// Points' hand-written encoder must say exactly what encoding/json says.
func TestPointsEncodeLikeEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC)
	ps := Points{
		{Seq: 1, At: at, Purpose: "conversation", ContextTokens: 838861, Input: 1200, CacheRead: 250000, CacheWrite: 3, CacheWrite1h: 4, Output: 900, CostUSD: 0.0123},
		{Seq: 2, At: at.In(time.FixedZone("x", 3600)), Purpose: `q"uote`, CostUSD: 1e-9},
		{Seq: 3, CostUSD: 12345678.5},
		{Seq: 4, CostUSD: 0},
	}
	got, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal([]Point(ps))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("hand-written:\n%s\nencoding/json:\n%s", got, want)
	}
	if b, _ := json.Marshal(Points(nil)); string(b) != "[]" {
		t.Fatalf("nil points: %s", b)
	}
	if b := appendFloat(nil, math.NaN()); string(b) != "0" {
		t.Fatalf("NaN: %s", b)
	}
}
