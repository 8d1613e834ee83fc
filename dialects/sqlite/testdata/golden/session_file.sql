-- table: outbox
SELECT file FROM pragma_database_list WHERE name = 'main'
-- table: jit_outbox
SELECT file FROM pragma_database_list WHERE name = 'main'
