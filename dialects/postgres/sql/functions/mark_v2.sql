-- Installed by every Migrate; a change is a new file and name (mark_v3),
-- never an edit (docs/schema.md). A function so it is one prepared round
-- trip; synchronous_commit off: a mark lost in a crash only republishes
-- rows, which at-least-once delivery allows.
CREATE OR REPLACE FUNCTION {{table}}_mark_v2(p_token TEXT, p_seqs TEXT, p_unblock TEXT, p_at TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
AS $mark$
DECLARE
    v_n BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_unblock IS NOT NULL THEN
        DELETE FROM {{table}}_blocked b
        USING {{table}}_partitions p
        WHERE b.seq = ANY (p_unblock::bigint[]) AND NOT b.dead AND p.part = b.part AND p.owner = p_token;
    END IF;
    IF p_at IS NULL THEN
        DELETE FROM {{table}} t
        USING {{table}}_partitions p
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0 AND p.part = t.part AND p.owner = p_token;
    ELSE
        UPDATE {{table}} t SET state = 1, published_at = p_at
        FROM {{table}}_partitions p
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0 AND p.part = t.part AND p.owner = p_token;
    END IF;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$mark$
