-- table: outbox
SELECT seq, aggregate_type, aggregate_id FROM outbox WHERE state <> 1
-- table: app.jit_outbox
SELECT seq, aggregate_type, aggregate_id FROM app.jit_outbox WHERE state <> 1
