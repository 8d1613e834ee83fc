-- table: outbox
SELECT 'outbox',
       (SELECT MAX(m.version) FROM outbox_migrations m),
       COALESCE((SELECT o.next_attempt_at FROM outbox o USE INDEX (outbox_claim_idx)
                 WHERE o.state = 0 AND o.next_attempt_at <= UTC_TIMESTAMP(6) ORDER BY o.seq LIMIT 1),
                (SELECT MIN(o.next_attempt_at) FROM outbox o USE INDEX (outbox_claim_idx) WHERE o.state = 0))
-- table: app.jit_outbox
SELECT 'app.jit_outbox',
       (SELECT MAX(m.version) FROM app.jit_outbox_migrations m),
       COALESCE((SELECT o.next_attempt_at FROM app.jit_outbox o USE INDEX (jit_outbox_claim_idx)
                 WHERE o.state = 0 AND o.next_attempt_at <= UTC_TIMESTAMP(6) ORDER BY o.seq LIMIT 1),
                (SELECT MIN(o.next_attempt_at) FROM app.jit_outbox o USE INDEX (jit_outbox_claim_idx) WHERE o.state = 0))
