-- The database's clock as it runs (not the transaction's start).
SELECT clock_timestamp()
