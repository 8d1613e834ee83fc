-- table: outbox
UPDATE outbox_relays SET expires_at = ?2 WHERE token = ?1
-- table: jit_outbox
UPDATE jit_outbox_relays SET expires_at = ?2 WHERE token = ?1
