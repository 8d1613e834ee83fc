-- Installed by every Migrate; a change is a new file and name (mark_v4),
-- never an edit (docs/schema.md). mark_v2 with one change: the fence is
-- the array of the partitions p_token owns, an InitPlan read once per
-- statement in its snapshot, not a join with <table>_partitions. The join
-- was planned as a nested loop that went through the owned partitions for
-- every row (about half of the statement's time on a 500-row delete); the
-- rows changed are the same. A function so it is one prepared round
-- trip; synchronous_commit off: a mark lost in a crash only republishes
-- rows, which at-least-once delivery allows.
CREATE OR REPLACE FUNCTION {{table}}_mark_v3(p_token TEXT, p_seqs TEXT, p_unblock TEXT, p_at TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE
AS $mark$
DECLARE
    v_n BIGINT;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_unblock IS NOT NULL THEN
        DELETE FROM {{table}}_blocked b
        WHERE b.seq = ANY (p_unblock::bigint[]) AND NOT b.dead
          AND b.part = ANY (ARRAY(SELECT p.part FROM {{table}}_partitions p WHERE p.owner = p_token));
    END IF;
    IF p_at IS NULL THEN
        DELETE FROM {{table}} t
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0
          AND t.part = ANY (ARRAY(SELECT p.part FROM {{table}}_partitions p WHERE p.owner = p_token));
    ELSE
        UPDATE {{table}} t SET state = 1, published_at = p_at
        WHERE t.seq = ANY (p_seqs::bigint[]) AND t.state = 0
          AND t.part = ANY (ARRAY(SELECT p.part FROM {{table}}_partitions p WHERE p.owner = p_token));
    END IF;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END
$mark$
