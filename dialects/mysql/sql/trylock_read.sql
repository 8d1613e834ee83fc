-- TryLock step 3: who holds lease @name now.
SELECT owner FROM {{table}}_locks WHERE name = @name
