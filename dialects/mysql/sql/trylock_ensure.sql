-- TryLock step 1: make sure the lock row exists. Args: name.
INSERT INTO {{table}}_locks (name) VALUES (?) ON DUPLICATE KEY UPDATE name = name
