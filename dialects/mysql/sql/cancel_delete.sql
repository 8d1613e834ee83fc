-- Deletes the rows cancel_select.sql locked.
DELETE FROM {{table}} WHERE id IN (@ids...)
