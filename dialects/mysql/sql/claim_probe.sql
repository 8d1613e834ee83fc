-- Is anything claimable at all? Run before a scan claim, outside any
-- transaction: an idle relay then costs this one statement per poll instead
-- of BEGIN + lock + select + COMMIT. A row committed just after the probe is
-- picked up by the next wake or poll, as if the claim had run a moment
-- earlier. Args: now, now.
SELECT 1 FROM {{table}}
WHERE state = 0
  AND next_attempt_at <= ?
  AND (locked_until IS NULL OR locked_until <= ?)
LIMIT 1
