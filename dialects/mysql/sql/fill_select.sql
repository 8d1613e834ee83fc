-- Migration 002: the rows whose partition must be set (pending and dead).
SELECT seq, aggregate_type, aggregate_id FROM {{table}} WHERE state <> 1
