-- A row's part must be below the partition count, or no relay reads it.
-- NOT VALID: no scan or long lock; older bad rows stay (Stats reports them).
-- The bound is a literal since a CHECK cannot read the meta table.
DO $part_check$
DECLARE
    n INTEGER;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint
                   WHERE conrelid = '{{table}}'::regclass AND conname = '{{name}}_part_ck') THEN
        SELECT m.partitions INTO n FROM {{table}}_meta m;
        EXECUTE format('ALTER TABLE {{table}} ADD CONSTRAINT {{name}}_part_ck CHECK (part >= 0 AND part < %s) NOT VALID', n);
    END IF;
END
$part_check$
