-- The outbox table's OID, resolved as every other statement resolves the
-- name (search_path for an unqualified one): the advisory lock namespaces
-- are derived from it, so that tables of one name in different schemas of
-- a database never share partition or relay locks.
SELECT '{{table}}'::regclass::oid::bigint
