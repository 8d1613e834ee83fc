-- Records failed attempts on rows of partitions $1 (the token) owns, and
-- blocks their aggregates where asked. $2 is a JSON array of
-- {"seq", "part", "at", "ai", "err", "next", "dead", "block"}. One
-- statement: the row updates and the blocks are data-modifying CTEs. The
-- fence is the row's own partition (t.part = owned.part): a failure that
-- names another partition changes nothing and records no block.
WITH f AS (
    SELECT * FROM json_to_recordset($2::text::json)
        AS x(seq BIGINT, part INTEGER, "at" TEXT, ai TEXT, err TEXT, next TIMESTAMPTZ, dead BOOLEAN, block BOOLEAN)
), owned AS (
    SELECT f.* FROM f JOIN {{table}}_partitions p ON p.part = f.part AND p.owner = $1
), upd AS (
    UPDATE {{table}} t
    SET attempts = t.attempts + 1, last_error = owned.err, next_attempt_at = owned.next,
        state = CASE WHEN owned.dead THEN 2 ELSE 0 END
    FROM owned
    WHERE t.seq = owned.seq AND t.part = owned.part AND t.state = 0
    RETURNING t.seq
)
INSERT INTO {{table}}_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT DISTINCT ON (owned.part, owned."at", owned.ai) owned.part, owned."at", owned.ai, owned.seq, owned.dead, owned.next
FROM owned JOIN upd ON upd.seq = owned.seq
WHERE owned.block
ORDER BY owned.part, owned."at", owned.ai, owned.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = EXCLUDED.seq, dead = EXCLUDED.dead, until = EXCLUDED.until
WHERE b.seq >= EXCLUDED.seq
