-- One row group of insert_leased.sql, with explicit types (VALUES in a CTE
-- does not take them from the target columns).
(?::text::uuid, ?::text, ?::text, ?::text, ?::bytea, ?::text::json, ?::text, ?::text::json, ?::text, ?::boolean, ?::timestamptz, ?::timestamptz)
