-- TryLock step 3: who holds the lease now. Args: name.
SELECT owner FROM {{table}}_locks WHERE name = ?
