package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"tollgate/pricing"
	"tollgate/test/wanterr"
)

const fullBody = `{"engine": "e_1", "profile": "deepseek-flash", "turn": "17",
 "trigger": "pressure", "deadlineSeconds": 28, "idleSeconds": 4,
 "contextWindow": 1048576, "thresholdTokens": 838861, "envelopeTokens": 13000,
 "surface": [{"id": "seq-8", "tokens": 5200, "kind": "tool-result", "breakpoint": false},
             {"id": "seq-9", "tokens": 300, "hash": "ignored", "breakpoint": true},
             {"id": "seq-12", "tokens": 4000, "kind": "tool-result"}],
 "plan": {"prune": [{"id": "seq-12", "tokensAfter": 1300}],
          "summarize": {"start": "seq-8", "end": "seq-9", "estimatedTokens": 4000,
                        "instructionTokens": 470, "sameFamily": true}},
 "wait": 120}`

func TestDecodeRewriteRequest(t *testing.T) {
	yes := true
	wait120, wait0 := 120, 0
	full := RewriteRequest{
		Engine: "e_1", Profile: "deepseek-flash", Turn: "17", Trigger: "pressure", DeadlineSeconds: 28, IdleSeconds: 4,
		ContextWindow: 1048576, ThresholdTokens: 838861, EnvelopeTokens: 13000,
		Surface: []pricing.Unit{{ID: "seq-8", Tokens: 5200, Kind: "tool-result"}, {ID: "seq-9", Tokens: 300, Breakpoint: true},
			{ID: "seq-12", Tokens: 4000, Kind: "tool-result"}},
		Plan: pricing.Plan{Prune: []pricing.Prune{{ID: "seq-12", TokensAfter: 1300}},
			Summarize: &pricing.SummaryPlan{Start: "seq-8", End: "seq-9", EstimatedTokens: 4000, InstructionTokens: 470, SameFamily: &yes}},
		Wait: &wait120,
	}
	minimal := func(extra string) string {
		return `{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{}` + extra + `}`
	}
	for _, tc := range []struct {
		name    string
		body    string
		want    *RewriteRequest // nil: only that it decodes
		wantErr string
	}{
		{name: "the §3 example", body: fullBody, want: &full},
		{name: "a number as turn is kept as its text", body: minimal(`,"turn":17`),
			want: &RewriteRequest{Trigger: "manual", Turn: "17", EnvelopeTokens: 1, Surface: []pricing.Unit{}}},
		{name: "a big or fractional turn too", body: minimal(`,"turn":-1.5e3`),
			want: &RewriteRequest{Trigger: "manual", Turn: "-1.5e3", EnvelopeTokens: 1, Surface: []pricing.Unit{}}},
		{name: "wait absent is nil", body: minimal(``),
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{}}},
		{name: "wait 0 is not absent", body: minimal(`,"wait":0`),
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{}, Wait: &wait0}},
		{name: "unknown fields are ignored, at every level", body: `{"x":{"y":[1,{"z":null}]},"trigger":"manual","envelopeTokens":1,
			"surface":[{"id":"a","tokens":1,"hash":"h","extra":[true]}],"plan":{"why":"?","prune":[{"id":"a","tokensAfter":0,"n":1}]}}`,
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{{ID: "a", Tokens: 1}},
				Plan: pricing.Plan{Prune: []pricing.Prune{{ID: "a"}}}}},
		{name: "keys match case-insensitively, as encoding/json does", body: `{"TRIGGER":"manual","EnvelopeTokens":1,"Surface":[{"ID":"a","Tokens":2}],"plan":{}}`,
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{{ID: "a", Tokens: 2}}}},
		{name: "escapes and non-ASCII ids", body: minimal(`,"engine":"\u00e9\n","surface":[{"id":"s\"1","tokens":1},{"id":"日本","tokens":2}]`),
			want: &RewriteRequest{Trigger: "manual", Engine: "é\n", EnvelopeTokens: 1, Surface: []pricing.Unit{{ID: `s"1`, Tokens: 1}, {ID: "日本", Tokens: 2}}}},
		{name: "a cacheModel object is kept raw", body: minimal(`,"cacheModel":{"granularity":1}`),
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{}, CacheModel: json.RawMessage(`{"granularity":1}`)}},
		{name: "null leaves values alone", body: minimal(`,"engine":null,"idleSeconds":null,"wait":null`),
			want: &RewriteRequest{Trigger: "manual", EnvelopeTokens: 1, Surface: []pricing.Unit{}}},

		{name: "a prediction with parts, and restored tokens", body: `{"trigger":"pressure","envelopeTokens":1,"surface":[{"id":"a","tokens":9}],
			"plan":{"summarize":{"start":"a","end":"a","estimatedTokens":4300,"restoredTokens":9800}},
			"prediction":{"low":12000,"high":19000,"cacheExpiredSeconds":540,"parts":[{"name":"summary","tokens":4300},{"name":"files","tokens":7000,"count":5}]}}`,
			want: &RewriteRequest{Trigger: "pressure", EnvelopeTokens: 1, Surface: []pricing.Unit{{ID: "a", Tokens: 9}},
				Plan:       pricing.Plan{Summarize: &pricing.SummaryPlan{Start: "a", End: "a", EstimatedTokens: 4300, RestoredTokens: 9800}},
				Prediction: &ColdPrediction{Low: 12000, High: 19000, CacheExpiredSeconds: 540, Parts: []ColdPart{{Name: "summary", Tokens: 4300}, {Name: "files", Tokens: 7000, Count: 5}}}}},
		{name: "a prediction's band upside down", body: minimal(`,"prediction":{"low":5,"high":4}`), wantErr: "prediction.high: must be between low (5) and 2^50, not 4"},
		{name: "a prediction's part without a name", body: minimal(`,"prediction":{"low":1,"high":2,"parts":[{"tokens":1}]}`), wantErr: "prediction.parts[0].name: must be a name of 1 to 32 bytes"},
		{name: "a prediction that is not an object", body: minimal(`,"prediction":[1]`), wantErr: "prediction: must be a prediction object, not an array"},
		{name: "a prediction's low of the wrong type", body: minimal(`,"prediction":{"low":"x"}`), wantErr: "prediction.low: must be a number"},

		// Errors name the field.
		{name: "missing trigger", body: `{"envelopeTokens":1,"surface":[],"plan":{}}`, wantErr: "trigger: is required"},
		{name: "missing envelope", body: `{"trigger":"manual","surface":[],"plan":{}}`, wantErr: "envelopeTokens: is required"},
		{name: "missing surface", body: `{"trigger":"manual","envelopeTokens":1,"plan":{}}`, wantErr: "surface: is required"},
		{name: "null surface", body: `{"trigger":"manual","envelopeTokens":1,"surface":null,"plan":{}}`, wantErr: "surface: is required"},
		{name: "missing plan", body: `{"trigger":"manual","envelopeTokens":1,"surface":[]}`, wantErr: "plan: is required"},
		{name: "unknown trigger", body: `{"trigger":"whim","envelopeTokens":1,"surface":[],"plan":{}}`,
			wantErr: `trigger: must be one of "pressure", "context-overflow", "manual", not "whim"`},
		{name: "a unit without tokens", body: minimal(`,"surface":[{"id":"a","tokens":1},{"id":"b"}]`), wantErr: "surface[1].tokens: is required"},
		{name: "a unit without id", body: minimal(`,"surface":[{"tokens":1}]`), wantErr: "surface[0].id: is required"},
		{name: "tokens of the wrong type", body: minimal(`,"surface":[{"id":"a","tokens":1},{"id":"b","tokens":"12"}]`),
			wantErr: "surface[1].tokens: must be an integer, not a string"},
		{name: "fractional tokens", body: minimal(`,"surface":[{"id":"a","tokens":1.5}]`), wantErr: "surface[0].tokens: must be an integer, not 1.5"},
		{name: "tokens beyond 64 bits", body: minimal(`,"surface":[{"id":"a","tokens":99999999999999999999}]`),
			wantErr: "surface[0].tokens: must be an integer of at most 64 bits, not 99999999999999999999"},
		{name: "an id of the wrong type", body: minimal(`,"surface":[{"id":7,"tokens":1}]`), wantErr: "surface[0].id: must be a string, not a number"},
		{name: "breakpoint of the wrong type", body: minimal(`,"surface":[{"id":"a","tokens":1,"breakpoint":"yes"}]`),
			wantErr: "surface[0].breakpoint: must be a boolean, not a string"},
		{name: "a null unit", body: minimal(`,"surface":[null]`), wantErr: "surface[0]: must be a unit object, not a null"},
		{name: "surface not an array", body: minimal(`,"surface":{}`), wantErr: "surface: must be an array of units, not an object"},
		{name: "a prune without tokensAfter", body: `{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{"prune":[{"id":"a"}]}}`,
			wantErr: "plan.prune[0].tokensAfter: is required"},
		{name: "a summary without end", body: `{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{"summarize":{"start":"a"}}}`,
			wantErr: "plan.summarize.end: is required"},
		{name: "sameFamily of the wrong type", body: `{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{"summarize":{"start":"a","end":"a","sameFamily":1}}}`,
			wantErr: "plan.summarize.sameFamily: must be a boolean, not a number"},
		{name: "turn of the wrong type", body: minimal(`,"turn":true`), wantErr: "turn: must be a string or a number, not a boolean"},
		{name: "wait of the wrong type", body: minimal(`,"wait":"soon"`), wantErr: "wait: must be an integer, not a string"},
		{name: "a fractional wait", body: minimal(`,"wait":1.5`), wantErr: "wait: must be an integer, not 1.5"},
		{name: "cacheModel not an object", body: minimal(`,"cacheModel":[]`), wantErr: "cacheModel: must be an object of pricing keys, not an array"},
		{name: "not an object", body: `[1]`, wantErr: "body: must be a JSON object"},
		{name: "empty", body: ` `, wantErr: "body: invalid JSON at offset 1: empty body"},
		{name: "truncated in a key", body: minimal(``)[:40], wantErr: "body: invalid JSON at offset 40: unterminated string"},
		{name: "truncated in the surface", body: minimal(``)[:50], wantErr: "surface[0]: invalid JSON at offset 50: unexpected end of input"},
		{name: "truncated after a member", body: minimal(``)[:52], wantErr: "body: invalid JSON at offset 52: unexpected end of input"},
		{name: "trailing comma", body: `{"trigger":"manual",}`, wantErr: "body: invalid JSON at offset 20: expected a key"},
		{name: "data after the object", body: minimal(``) + ` {}`, wantErr: "body: invalid JSON at offset 63: data after the top-level object"},
		{name: "a control character in a string", body: "{\"engine\":\"a\x01\"}", wantErr: "engine: invalid JSON at offset 12: control character in string"},
		{name: "too deep", body: `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
			wantErr: "x: invalid JSON at offset 10004: exceeded max depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRewriteRequest([]byte(tc.body))
			if wanterr.Typed[*FieldError](t, err, tc.wantErr) {
				return
			}
			if tc.want != nil && !reflect.DeepEqual(got, *tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, *tc.want)
			}
			checkAgainstEncodingJSON(t, []byte(tc.body))
		})
	}
}

// mirror is RewriteRequest as encoding/json decodes it, for the
// differential tests; only turn needs help to accept a number.
type mirror struct {
	Engine          string          `json:"engine"`
	Profile         string          `json:"profile"`
	Turn            mirrorTurn      `json:"turn"`
	Trigger         string          `json:"trigger"`
	DeadlineSeconds float64         `json:"deadlineSeconds"`
	IdleSeconds     float64         `json:"idleSeconds"`
	ContextWindow   int64           `json:"contextWindow"`
	ThresholdTokens int64           `json:"thresholdTokens"`
	EnvelopeTokens  int64           `json:"envelopeTokens"`
	Surface         []pricing.Unit  `json:"surface"`
	Plan            pricing.Plan    `json:"plan"`
	Wait            *int            `json:"wait,omitempty"`
	CacheModel      json.RawMessage `json:"cacheModel,omitempty"`
	Prediction      *ColdPrediction `json:"prediction,omitempty"`
}

type mirrorTurn string

func (t *mirrorTurn) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		err := json.Unmarshal(b, &s)
		*t = mirrorTurn(s)
		return err
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		*t = mirrorTurn(b)
		return nil
	}
	return errors.New("turn: not a string or a number")
}

func (m mirror) request() RewriteRequest {
	return RewriteRequest{Engine: m.Engine, Profile: m.Profile, Turn: string(m.Turn), Trigger: m.Trigger,
		DeadlineSeconds: m.DeadlineSeconds, IdleSeconds: m.IdleSeconds, ContextWindow: m.ContextWindow,
		ThresholdTokens: m.ThresholdTokens, EnvelopeTokens: m.EnvelopeTokens, Surface: m.Surface, Plan: m.Plan,
		Wait: m.Wait, CacheModel: m.CacheModel, Prediction: m.Prediction}
}

// stricterThanJSON lists the errors the decoder adds to encoding/json's:
// required fields and values, and shapes it refuses on purpose.
var stricterThanJSON = []string{": is required", "trigger: must be one of", "cacheModel: must be an object of pricing keys",
	": must be a unit object, not a null", ": must be a prune object, not a null", "body: must be a JSON object",
	"prediction: must be a prediction object", "prediction.low: must be between", "prediction.high: must be between",
	"prediction.parts: must have at most", ".name: must be a name of", ".tokens: must be between", ".count: must be ≥ 0",
	"prediction.cacheExpiredSeconds: must be"}

// checkAgainstEncodingJSON: whatever the decoder accepts, encoding/json
// accepts too and decodes to the same values; whatever encoding/json accepts
// the decoder accepts, unless it breaks one of the decoder's own rules.
func checkAgainstEncodingJSON(t testing.TB, body []byte) {
	t.Helper()
	got, err := DecodeRewriteRequest(body)
	var m mirror
	jerr := json.Unmarshal(body, &m)
	switch {
	case err == nil && jerr != nil:
		t.Fatalf("decoder accepts what encoding/json refuses (%v): %q", jerr, body)
	case err == nil && !reflect.DeepEqual(got, m.request()):
		t.Fatalf("decoder and encoding/json disagree on %q:\n got  %#v\n json %#v", body, got, m.request())
	case err != nil && jerr == nil:
		for _, s := range stricterThanJSON {
			if strings.Contains(err.Error(), s) {
				return
			}
		}
		t.Fatalf("decoder refuses what encoding/json accepts: %v: %q", err, body)
	case err != nil:
		if _, ok := err.(*FieldError); !ok {
			t.Fatalf("error %T does not name its field: %v", err, err)
		}
	}
}

// FuzzDecodeRewriteRequest: never a panic, and agreement with encoding/json.
// The seed corpus lives in testdata/fuzz/FuzzDecodeRewriteRequest.
func FuzzDecodeRewriteRequest(f *testing.F) {
	f.Add([]byte(fullBody))
	f.Add(surfaceBody(3))
	f.Add([]byte(`{"trigger":"pressure","envelopeTokens":1,"surface":[{"id":"a","tokens":9}],"plan":{"summarize":{"start":"a","end":"a","restoredTokens":9800}},` +
		`"prediction":{"low":12000,"high":19000,"cacheExpiredSeconds":540,"parts":[{"name":"summary","tokens":4300},{"name":"files","tokens":7000,"count":5}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgainstEncodingJSON(t, body)
	})
}

func TestToQuoteRequest(t *testing.T) {
	r, err := DecodeRewriteRequest([]byte(fullBody))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := pricing.Builtin("deepseek", "deepseek-flash")
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	q := r.ToQuoteRequest(m, at)
	if q.EnvelopeTokens != 13000 || len(q.Units) != 3 || q.Plan.Summarize == nil || q.ContextWindow != 1048576 ||
		q.ThresholdTokens != 838861 || q.IdleSeconds != 4 || !q.At.Equal(at) || q.Model.Granularity != 64 {
		t.Fatalf("ToQuoteRequest = %+v", q)
	}
	if _, err := pricing.NewQuote(q); err != nil {
		t.Fatal(err)
	}
}

func TestApplyCacheModel(t *testing.T) {
	base, _ := pricing.Builtin("deepseek", "deepseek-flash")
	for _, tc := range []struct {
		name, cacheModel string
		check            func(pricing.CacheModel) bool
		wantErr          string
	}{
		{"absent: the profile as it is", ``, func(m pricing.CacheModel) bool { return reflect.DeepEqual(m, base) }, ""},
		{"null: the profile as it is", `,"cacheModel":null`, func(m pricing.CacheModel) bool { return reflect.DeepEqual(m, base) }, ""},
		{"present keys override, the others stay", `,"cacheModel":{"pricePerMTokens":1,"granularity":1,"estimatedSummaryTokens":9}`,
			func(m pricing.CacheModel) bool {
				return m.PricePerMTokens == 1 && m.Granularity == 1 && m.EstimatedSummaryTokens == 9 &&
					m.CacheHitPricePerMTokens == base.CacheHitPricePerMTokens && m.OffPeak != nil
			}, ""},
		{"the window is copied, not shared", `,"cacheModel":{"offPeak":{"days":["sun"]}}`,
			func(m pricing.CacheModel) bool {
				return m.OffPeak.Days[0] == "sun" && base.OffPeak.Days[0] == "mon-fri"
			}, ""},
		{"wrong type names the key", `,"cacheModel":{"granularity":"big"}`, nil, "cacheModel.granularity: must be a number, not a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeRewriteRequest([]byte(`{"trigger":"manual","envelopeTokens":1,"surface":[],"plan":{}` + tc.cacheModel + `}`))
			if err != nil {
				t.Fatal(err)
			}
			m, err := r.ApplyCacheModel(base)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(m) {
				t.Fatalf("ApplyCacheModel = %+v, %v", m, err)
			}
		})
	}
}

// surfaceBody is a rewrite body with n units, shaped like a real harness's.
func surfaceBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"engine":"e_4f2a","profile":"deepseek-flash","turn":"17","trigger":"pressure","deadlineSeconds":28,` +
		`"idleSeconds":4,"contextWindow":1048576,"thresholdTokens":838861,"envelopeTokens":13000,"surface":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		kind := "tool-result"
		if i%3 == 0 {
			kind = "assistant"
		}
		fmt.Fprintf(&b, `{"id":"seq-%d","tokens":%d,"kind":"%s","breakpoint":%t,"hash":"%016x"}`, i, 100+i%977, kind, i == n-1, i*2654435761)
	}
	b.WriteString(`],"plan":{"prune":[`)
	for i := 0; i < 12 && i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"seq-%d","tokensAfter":20}`, n-1-i*3)
	}
	fmt.Fprintf(&b, `],"summarize":{"start":"seq-0","end":"seq-%d","estimatedTokens":4000,"instructionTokens":470,"sameFamily":true}},"wait":120}`, n/2)
	return b.Bytes()
}

// BenchmarkDecodeRewriteRequest compares the decoder with encoding/json on
// the same 5,000-unit body, side by side in one run.
func BenchmarkDecodeRewriteRequest(b *testing.B) {
	for _, n := range []int{500, 5000} {
		body := surfaceBody(n)
		b.Run(fmt.Sprintf("units=%d/decoder", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeRewriteRequest(body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("units=%d/encoding-json", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var m mirror
				if err := json.Unmarshal(body, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeAndQuote is the pricing half of the gate: decode the body,
// price it.
func BenchmarkDecodeAndQuote(b *testing.B) {
	body := surfaceBody(5000)
	m, _ := pricing.Builtin("deepseek", "deepseek-flash")
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := DecodeRewriteRequest(body)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pricing.NewQuote(r.ToQuoteRequest(m, at)); err != nil {
			b.Fatal(err)
		}
	}
}
