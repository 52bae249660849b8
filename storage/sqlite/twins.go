package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"tollgate/storage"
)

// Twins: one billed request, two witnesses. A harness's live telemetry
// (storage.ViaOTLP) and its log (storage.ViaImport) both report it, in
// either order; the second to arrive finds the first and stores nothing
// (migration 0007). The match, first that holds:
//
//  1. a row of the other side already twinned with this request id (a
//     retried export, a re-imported file);
//  2. a row of the other side with the same message uuid (Claude Code
//     writes a message of several content blocks as several lines, one
//     uuid each; its assistant_response names the LAST line's — seen with
//     the real 2.1.332 answering text then tool_use — which is the one the
//     importer keeps);
//  3. the earliest unmatched row of the other side with the same five
//     token counts within witnessWindow (so identical requests pair up in
//     order). Uuids are not compared here: a log read while the message
//     was half written holds an earlier line's.
//
// The row found takes this request's id as its twin (and the uuid it
// lacked), so the same request arriving again is matched by rule 1.

// witnessWindow is how far apart the two witnesses' times may be: the
// telemetry event is stamped when the response ended, the log line when
// it began streaming.
const witnessWindow = 10 * time.Minute

func otherSide(via string) string {
	if via == storage.ViaOTLP {
		return storage.ViaImport
	}
	return storage.ViaOTLP
}

// findTwinTx returns the row id and request id of r's twin, if stored.
func findTwinTx(ctx context.Context, q querier, r storage.Request) (int64, string, bool, error) {
	other := otherSide(r.Via)
	var id int64
	var rid string
	scan := func(err error) (bool, error) {
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	ok, err := scan(q.QueryRowContext(ctx, `SELECT id, request_id FROM requests INDEXED BY requests_twin WHERE session_id = ? AND twin = ? AND twin <> '' AND via = ? AND via <> '' LIMIT 1`,
		r.Session.ID, r.RequestID, other).Scan(&id, &rid))
	if err != nil || ok {
		return id, rid, ok, err
	}
	if r.MessageUUID != "" {
		ok, err := scan(q.QueryRowContext(ctx, `SELECT id, request_id FROM requests INDEXED BY requests_message_uuid WHERE session_id = ? AND message_uuid = ? AND message_uuid <> '' AND via = ? AND via <> '' LIMIT 1`,
			r.Session.ID, r.MessageUUID, other).Scan(&id, &rid))
		if err != nil || ok {
			return id, rid, ok, err
		}
	}
	at, u := r.At.UnixMilli(), r.Usage
	w := witnessWindow.Milliseconds()
	// The earliest unmatched one in the window (the index walks in time
	// order): two requests with the same figures pair up in order.
	err = q.QueryRowContext(ctx, `SELECT id, request_id FROM requests INDEXED BY requests_via_figures
		WHERE session_id = ? AND via = ? AND via <> '' AND input = ? AND output = ? AND at BETWEEN ? AND ?
		  AND twin = '' AND cache_read = ? AND cache_write = ? AND cache_write_1h = ? LIMIT 1`,
		r.Session.ID, other, u.Input, u.Output, at-w, at+w, u.CacheRead, u.CacheWrite, u.CacheWrite1h).Scan(&id, &rid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", false, nil
	}
	return id, rid, err == nil, err
}

// The "<> ''" terms let SQLite use the partial indexes of migration 0007
// (it cannot prove that a bound parameter is not empty), and INDEXED BY
// keeps it from preferring requests_at: without statistics it walked the
// whole time window of the session's rows on every request received.

// twinTx matches r with its twin, if stored, and marks the pair.
func twinTx(ctx context.Context, q querier, r storage.Request) (string, bool, error) {
	id, rid, ok, err := findTwinTx(ctx, q, r)
	if err != nil {
		return "", false, fmt.Errorf("looking for the twin of request %q: %w", r.RequestID, err)
	}
	if !ok {
		return "", false, nil
	}
	if _, err := q.ExecContext(ctx, `UPDATE requests SET twin = ?, message_uuid = CASE WHEN message_uuid = '' THEN ? ELSE message_uuid END WHERE id = ?`,
		r.RequestID, r.MessageUUID, id); err != nil {
		return "", false, fmt.Errorf("marking the twin of request %q: %w", r.RequestID, err)
	}
	return rid, true, nil
}

// hasSideTx says whether the session holds any request of the side a twin
// of via would come from: an import pass asks once per session, not once
// per row.
func hasSideTx(ctx context.Context, q querier, session, via string) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM requests INDEXED BY requests_via_figures WHERE session_id = ? AND via = ? AND via <> '')`, session, otherSide(via)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("reading session %q: %w", session, err)
	}
	return n == 1, nil
}

// LinkMessageUUID gives a stored request its message uuid when it had none
// (Claude Code's assistant_response came in a later export than its
// api_request). A request matched by an import meanwhile keeps its row.
func (db *DB) LinkMessageUUID(ctx context.Context, session, requestID, uuid string) error {
	_, err := db.writer.submit(ctx, func(tx querier) (any, error) {
		_, err := tx.ExecContext(ctx, `UPDATE requests SET message_uuid = ? WHERE session_id = ? AND request_id = ? AND message_uuid = ''`,
			uuid, session, requestID)
		return nil, err
	})
	if err != nil {
		return fmt.Errorf("linking request %q of session %q: %w", requestID, session, err)
	}
	return nil
}
