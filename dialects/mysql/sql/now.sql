-- The server's clock in UTC, as DATETIMEs are stored.
SELECT UTC_TIMESTAMP(6)
