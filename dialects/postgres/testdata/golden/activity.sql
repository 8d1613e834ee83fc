-- table: outbox
SELECT 'outbox',
       (SELECT max(m.version) FROM outbox_migrations m),
       COALESCE((SELECT o.next_attempt_at FROM outbox o
                 WHERE o.state = 0 AND o.next_attempt_at <= now() ORDER BY o.seq LIMIT 1),
                (SELECT min(o.next_attempt_at) FROM outbox o WHERE o.state = 0))
-- table: app.jit_outbox
SELECT 'app.jit_outbox',
       (SELECT max(m.version) FROM app.jit_outbox_migrations m),
       COALESCE((SELECT o.next_attempt_at FROM app.jit_outbox o
                 WHERE o.state = 0 AND o.next_attempt_at <= now() ORDER BY o.seq LIMIT 1),
                (SELECT min(o.next_attempt_at) FROM app.jit_outbox o WHERE o.state = 0))
