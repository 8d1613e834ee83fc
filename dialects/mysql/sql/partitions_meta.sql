-- The table's partition count (migration 002's Go step).
SELECT partitions FROM {{table}}_meta
