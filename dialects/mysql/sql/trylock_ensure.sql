-- TryLock step 1: makes sure the row of lock @name exists.
INSERT INTO {{table}}_locks (name) VALUES (@name) ON DUPLICATE KEY UPDATE name = name
