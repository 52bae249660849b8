-- 0007: one request, two witnesses. A harness's live telemetry (OTLP) and
-- its log (an import) report the same billed request; the second to
-- arrive is matched with the first and stored nothing twice.
--   via:          'otlp' | 'import' | '' (the API: no twin expected)
--   message_uuid: the harness's id of the response, when it tells one
--                 (Claude Code's assistant line uuid = telemetry's message.uuid)
--   twin:         the request id the other side gave the same request
ALTER TABLE requests ADD COLUMN via TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN message_uuid TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN twin TEXT NOT NULL DEFAULT '';
CREATE INDEX requests_via_figures ON requests(session_id, via, input, output, at) WHERE via <> '';
CREATE INDEX requests_message_uuid ON requests(session_id, message_uuid) WHERE message_uuid <> '';
CREATE INDEX requests_twin ON requests(session_id, twin) WHERE twin <> '';
