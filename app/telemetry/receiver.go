package telemetry

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"tollgate/app/config"
	"tollgate/guard"
	"tollgate/guard/api"
	"tollgate/storage"
)

// The receiver's routes, on the API listener behind its bearer token
// (OTEL_EXPORTER_OTLP_ENDPOINT=<tollgate>/otlp: the SDKs append /v1/logs
// and /v1/metrics).
const (
	LogsRoute        = "POST /otlp/v1/logs"
	OTLPMetricsRoute = "POST /otlp/v1/metrics"
	// BodyLimit bounds an export as sent (compressed or not); maxDecoded
	// bounds it after gzip. The SDKs send batches of at most 512 records,
	// a few hundred KiB.
	BodyLimit  = 8 << 20
	maxDecoded = 32 << 20
)

// Store records a batch of requests in one transaction: all or nothing.
type Store interface {
	RecordRequests(ctx context.Context, rs []storage.Request) ([]storage.StoredRequest, error)
	// LinkMessageUUID gives a stored request the harness's id of its
	// response, when it had none.
	LinkMessageUUID(ctx context.Context, session, requestID, uuid string) error
}

// Receiver serves the OTLP routes for one tollgate.
type Receiver struct {
	Store    Store
	Settings *config.Settings
	// Publish sends an event to the UI (the guard's event stream); nil: none.
	Publish func(event string, data any)
	Log     *slog.Logger
	Now     func() time.Time

	mu   sync.Mutex
	last map[string]time.Time // harness → newest event received
}

// LastEvent is when the newest event of a harness was received, if any.
func (rc *Receiver) LastEvent(harness string) (time.Time, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	t, ok := rc.last[harness]
	return t, ok
}

// lastEvents copies the newest event time of every harness.
func (rc *Receiver) lastEvents() map[string]time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]time.Time, len(rc.last))
	for h, t := range rc.last {
		out[h] = t
	}
	return out
}

func (rc *Receiver) now() time.Time {
	if rc.Now != nil {
		return rc.Now()
	}
	return time.Now()
}

func (rc *Receiver) log() *slog.Logger {
	if rc.Log != nil {
		return rc.Log
	}
	return slog.Default()
}

// encoding is an export's wire format.
type encoding int

const (
	encProto encoding = iota
	encJSON
)

// readExport reads a bounded, possibly gzipped body and says its encoding.
// It answers the error itself and returns false.
func readExport(w http.ResponseWriter, r *http.Request) ([]byte, encoding, bool) {
	var enc encoding
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-protobuf", "application/protobuf":
		enc = encProto
	case "application/json":
		enc = encJSON
	default:
		api.WriteError(w, http.StatusUnsupportedMediaType, "Content-Type",
			"want application/x-protobuf or application/json (OTLP/HTTP), got "+strconv.Quote(mt))
		return nil, 0, false
	}
	var body io.Reader = r.Body
	switch ce := r.Header.Get("Content-Encoding"); ce {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			if tooLarge(w, err) {
				return nil, 0, false
			}
			api.WriteError(w, http.StatusBadRequest, "Content-Encoding", "gzip: "+err.Error())
			return nil, 0, false
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxDecoded+1)
	default:
		api.WriteError(w, http.StatusUnsupportedMediaType, "Content-Encoding", "want gzip or none, got "+strconv.Quote(ce))
		return nil, 0, false
	}
	b, err := io.ReadAll(body)
	if err != nil {
		if tooLarge(w, err) {
			return nil, 0, false
		}
		api.WriteError(w, http.StatusBadRequest, "body", "reading: "+err.Error())
		return nil, 0, false
	}
	if len(b) > maxDecoded {
		api.WriteError(w, http.StatusRequestEntityTooLarge, "body", "over "+strconv.Itoa(maxDecoded)+" bytes once decompressed")
		return nil, 0, false
	}
	return b, enc, true
}

// tooLarge answers 413 for a body over the route's limit.
func tooLarge(w http.ResponseWriter, err error) bool {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		api.WriteError(w, http.StatusRequestEntityTooLarge, "body", "over the limit of "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
		return true
	}
	return false
}

// respond writes an empty Export*ServiceResponse in the request's encoding.
func respond(w http.ResponseWriter, enc encoding, proto func() ([]byte, error), json func() ([]byte, error)) {
	ct, marshal := "application/x-protobuf", proto
	if enc == encJSON {
		ct, marshal = "application/json", json
	}
	b, err := marshal()
	if err != nil {
		api.WriteError(w, http.StatusInternalServerError, "", "encoding the response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// decodeExport decodes an export body with the pdata decoder of its
// encoding; a body that does not decode is answered 400 naming what it is
// not, and the caller stops.
func decodeExport(w http.ResponseWriter, kind string, enc encoding, body []byte, fromJSON, fromProto func([]byte) error) bool {
	decode, name := fromProto, "protobuf"
	if enc == encJSON {
		decode, name = fromJSON, "JSON"
	}
	if err := decode(body); err != nil {
		api.WriteError(w, http.StatusBadRequest, "body", "not an OTLP "+kind+" export ("+name+"): "+err.Error())
		return false
	}
	return true
}

// Logs serves LogsRoute: the request events become recorded requests,
// priced like POST /v1/sessions/{id}/requests and stored in one
// transaction. A malformed export is a 400 naming the field, and nothing
// of it is stored.
func (rc *Receiver) Logs() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, enc, ok := readExport(w, r)
		if !ok {
			return
		}
		req := plogotlp.NewExportRequest()
		if !decodeExport(w, "logs", enc, body, req.UnmarshalJSON, req.UnmarshalProto) {
			return
		}
		now := rc.now()
		batch, err := Requests(req.Logs(), now)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				api.WriteError(w, http.StatusBadRequest, fe.Field, fe.Message)
			} else {
				api.WriteError(w, http.StatusBadRequest, "body", err.Error())
			}
			return
		}
		if len(batch.Requests) > 0 {
			if !rc.store(w, r.Context(), batch.Requests) {
				return
			}
		}
		for _, l := range batch.Links {
			if err := rc.Store.LinkMessageUUID(r.Context(), l.Session, l.RequestID, l.UUID); err != nil {
				// The figures still match its import; the uuid only sharpens it.
				rc.log().Warn("linking a response to its request", "session", l.Session, "err", err)
			}
		}
		rc.mu.Lock()
		if rc.last == nil {
			rc.last = map[string]time.Time{}
		}
		for h := range batch.Last {
			rc.last[h] = now
		}
		rc.mu.Unlock()
		resp := plogotlp.NewExportResponse()
		respond(w, enc, resp.MarshalProto, resp.MarshalJSON)
	})
}

// store prices and records the requests, then announces the new ones.
func (rc *Receiver) store(w http.ResponseWriter, ctx context.Context, rs []storage.Request) bool {
	for i := range rs {
		q := &rs[i]
		pu, err := rc.Settings.PriceUsage(q.Profile, q.Provider, q.Model, q.At, q.Usage)
		if err != nil {
			// As the API does: a profile that cannot price must not lose
			// the usage; it is stored at zero cost and re-priced later.
			rc.log().Error("pricing a request received over OTLP", "session", q.Session.ID, "err", err)
			q.PricedBy = "none"
			continue
		}
		if field := storage.CheckCost(pu.Cost); field != "" {
			// As the API does: a cost out of range is stored as zero.
			rc.log().Error("pricing a request received over OTLP gave a cost out of range", "session", q.Session.ID, "field", field)
			q.PricedBy = "none"
			continue
		}
		q.Cost, q.Prices, q.PricedBy, q.OffPeak, q.TTLSeconds = pu.Cost, pu.Prices, string(pu.PricedBy), pu.OffPeak, pu.TTLSeconds
	}
	stored, err := rc.Store.RecordRequests(ctx, rs)
	if err != nil {
		rc.log().Error("recording requests received over OTLP", "requests", len(rs), "err", err)
		api.WriteError(w, http.StatusServiceUnavailable, "", "storing the requests: "+err.Error())
		return false
	}
	for _, st := range stored {
		if st.Duplicate {
			continue
		}
		if rc.Publish != nil {
			rc.Publish(guard.EventRequestRecord, api.RequestRecorded{
				Session: st.SessionID, RequestID: st.RequestID, Seq: st.Seq, At: st.At, Purpose: st.Purpose,
				ContextTokens: st.ContextTokens, CostUSD: st.Cost.Total,
			})
			if st.Break != nil { // the cache-break ledger judged it on the way in
				rc.Publish(guard.EventBreakDetected, *st.Break)
			}
		}
	}
	return true
}

// Metrics serves OTLPMetricsRoute. The harnesses' metrics are aggregates of
// the events Logs records (claude_code.token.usage sums api_request's
// counts), so they are decoded, checked and acknowledged, not stored:
// the per-request events are the record.
func (rc *Receiver) Metrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, enc, ok := readExport(w, r)
		if !ok {
			return
		}
		req := pmetricotlp.NewExportRequest()
		if !decodeExport(w, "metrics", enc, body, req.UnmarshalJSON, req.UnmarshalProto) {
			return
		}
		resp := pmetricotlp.NewExportResponse()
		respond(w, enc, resp.MarshalProto, resp.MarshalJSON)
	})
}
