-- table: outbox
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM outbox_relays r
    WHERE IS_USED_LOCK(CONCAT(?, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM outbox_partitions p
-- table: app.jit_outbox
WITH live AS (
    SELECT r.id, r.token, r.name, r.started_at FROM app.jit_outbox_relays r
    WHERE IS_USED_LOCK(CONCAT(?, r.id)) IS NOT NULL
)
SELECT 'r', live.id, live.token, live.name, live.started_at, 0, TRUE FROM live
UNION ALL
SELECT 'p', p.part, COALESCE(p.owner, ''), '', p.taken_at, p.epoch,
       EXISTS (SELECT 1 FROM live WHERE live.token = p.owner)
FROM app.jit_outbox_partitions p
