-- The table's OID, resolved like every statement (search_path): lock
-- namespaces derive from it, so same-named tables in different schemas
-- never share locks.
SELECT '{{table}}'::regclass::oid::bigint
