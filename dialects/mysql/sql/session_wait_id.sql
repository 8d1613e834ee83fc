-- The watch connection's thread id: WaitChange KILLs its query when its
-- context ends, as the driver only closes the client side.
SELECT CONNECTION_ID()
