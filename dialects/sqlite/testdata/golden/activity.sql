-- table: outbox
SELECT 'outbox',
       (SELECT max(m.version) FROM outbox_migrations m),
       coalesce((SELECT o.next_attempt_at FROM outbox o INDEXED BY outbox_claim_idx
                 WHERE o.state = 0 AND o.next_attempt_at <= ?1 ORDER BY o.seq LIMIT 1),
                (SELECT min(o.next_attempt_at) FROM outbox o INDEXED BY outbox_claim_idx WHERE o.state = 0))
-- table: jit_outbox
SELECT 'jit_outbox',
       (SELECT max(m.version) FROM jit_outbox_migrations m),
       coalesce((SELECT o.next_attempt_at FROM jit_outbox o INDEXED BY jit_outbox_claim_idx
                 WHERE o.state = 0 AND o.next_attempt_at <= ?1 ORDER BY o.seq LIMIT 1),
                (SELECT min(o.next_attempt_at) FROM jit_outbox o INDEXED BY jit_outbox_claim_idx WHERE o.state = 0))
