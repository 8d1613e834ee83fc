-- The row of event @id (Inspector.Get).
SELECT {{inspect_columns}}
FROM {{table}} o
WHERE o.id = @id
