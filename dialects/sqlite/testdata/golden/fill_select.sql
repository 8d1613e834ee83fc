-- table: outbox
SELECT seq, aggregate_type, aggregate_id FROM outbox WHERE state <> 1
-- table: jit_outbox
SELECT seq, aggregate_type, aggregate_id FROM jit_outbox WHERE state <> 1
