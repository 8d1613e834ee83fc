-- part gets a CHECK: 0 <= part < the table's partition count (from
-- {{table}}_meta, fixed at creation). A row outside it is in no partition
-- a relay owns, so it would never be published. Writers of every version
-- write PartitionOf(...) < P, so they are not affected. NOT VALID: the
-- existing rows are not scanned (no long lock on a large table) and rows
-- written before the check are kept; Stats counts them (BadPartition) and
-- the Inspector reports them (column part). New and updated rows are
-- checked. The bound is a literal (a CHECK cannot read another table),
-- built from the meta row.
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
