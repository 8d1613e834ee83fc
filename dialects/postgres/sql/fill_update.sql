-- Migration 002: $1 partition, $2 array literal of seqs.
UPDATE {{table}} SET part = $1 WHERE seq = ANY ($2::text::bigint[])
