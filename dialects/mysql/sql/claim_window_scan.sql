-- The scan claim's first attempt (claimByWindow): the keys of the first
-- `window` pending rows in seq order, leased and backing-off rows included,
-- read (non-locking, latest committed data) after claim_lock.sql. The
-- dialect applies the hold-back rule to them in one pass (a row is
-- claimable unless it, or an earlier row of its aggregate in the window, is
-- leased or not yet due). The window is a complete prefix of the pending
-- rows, so every row that could hold a candidate back is in it. This
-- replaces a dependent NOT EXISTS per candidate, which MariaDB runs as a ref
-- scan of all the aggregate's pending rows: 16 ms against 0.8 ms for 500
-- rows of a 100,000-row backlog over 1,000 aggregates (MariaDB 10.11, 2-vCPU
-- machine, 2026-11-22).
-- Args: now, now, window.
SELECT seq, aggregate_type, aggregate_id,
       (COALESCE(locked_until > ?, FALSE) OR next_attempt_at > ?) AS busy
FROM {{table}}
WHERE state = 0
ORDER BY seq
LIMIT ?
