-- On a new watch connection: its server thread id, which WaitChange kills
-- (KILL QUERY) once its context ended: the driver only closes the client
-- side, and the server thread would go on waiting until it notices.
SELECT CONNECTION_ID()
