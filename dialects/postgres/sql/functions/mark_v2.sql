-- The relay's mark (mark.sql), installed by Migrate after the migrations
-- (CREATE OR REPLACE: every Migrate). A change to it is a new file under a
-- new name (mark_v3.sql creating {{table}}_mark_v3), never an edit of this
-- one. See docs/schema.md.
--
-- Marks (p_at set) or deletes (p_at NULL) the rows of p_seqs (an array
-- literal) in partitions p_token owns, removes the retry blocks of
-- p_unblock, and returns how many rows it changed. One prepared statement
-- (lib/pq: one round trip instead of two), and, transaction-local,
-- synchronous_commit off: the COMMIT does not wait for the WAL flush. A
-- mark lost in a server crash leaves its rows pending: they are published
-- again, which at-least-once delivery allows (and JetStream's duplicate
-- window drops while it lasts, by Nats-Msg-Id).
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
