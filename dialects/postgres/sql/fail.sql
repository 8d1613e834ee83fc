-- Records failed attempts and blocks their aggregates in one statement
-- (data-modifying CTEs). Fenced by the row's own partition: a failure naming
-- a partition @token does not own changes nothing.
WITH f AS (
    SELECT * FROM json_to_recordset(@failures::text::json)
        AS x(seq BIGINT, part INTEGER, "at" TEXT, ai TEXT, err TEXT, next TIMESTAMPTZ, dead BOOLEAN, block BOOLEAN)
), owned AS (
    SELECT f.* FROM f JOIN {{table}}_partitions p ON p.part = f.part AND p.owner = @token
), upd AS (
    UPDATE {{table}} t
    SET attempts = t.attempts + 1, last_error = owned.err, next_attempt_at = owned.next,
        state = CASE WHEN owned.dead THEN 2 ELSE 0 END
    FROM owned
    WHERE t.seq = owned.seq AND t.part = owned.part AND t.state = 0
    RETURNING t.seq
), released AS (
    -- A dead row without a block ends its aggregate's retry block.
    DELETE FROM {{table}}_blocked b
    USING owned JOIN upd ON upd.seq = owned.seq
    WHERE owned.dead AND NOT owned.block
      AND b.part = owned.part AND b.aggregate_type = owned."at" AND b.aggregate_id = owned.ai
)
INSERT INTO {{table}}_blocked AS b (part, aggregate_type, aggregate_id, seq, dead, until)
SELECT DISTINCT ON (owned.part, owned."at", owned.ai) owned.part, owned."at", owned.ai, owned.seq, owned.dead, owned.next
FROM owned JOIN upd ON upd.seq = owned.seq
WHERE owned.block
ORDER BY owned.part, owned."at", owned.ai, owned.seq
ON CONFLICT (part, aggregate_type, aggregate_id) DO UPDATE
SET seq = EXCLUDED.seq, dead = EXCLUDED.dead, until = EXCLUDED.until
WHERE b.seq >= EXCLUDED.seq
