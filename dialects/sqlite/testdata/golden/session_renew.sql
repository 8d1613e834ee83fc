-- table: outbox
UPDATE outbox_relays SET expires_at = ?1 WHERE token = ?2
-- table: jit_outbox
UPDATE jit_outbox_relays SET expires_at = ?1 WHERE token = ?2
