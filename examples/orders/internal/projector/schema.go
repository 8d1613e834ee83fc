package projector

import (
	"context"
	"fmt"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
)

// schemas per dialect: the projection. The processed event ids are the
// inbox's (package inbox, tables projector_processed and
// projector_aggregates).
var schemas = map[string][]string{
	shop.Postgres: {
		`CREATE TABLE IF NOT EXISTS projector_orders (
    order_id    TEXT PRIMARY KEY,
    customer    TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    status      TEXT NOT NULL,
    events      INTEGER NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
)`,
	},
	shop.MySQL: {
		`CREATE TABLE IF NOT EXISTS projector_orders (
    order_id    VARCHAR(36) NOT NULL PRIMARY KEY,
    customer    VARCHAR(255) NOT NULL,
    total_cents BIGINT NOT NULL,
    status      VARCHAR(16) NOT NULL,
    events      INT NOT NULL,
    updated_at  DATETIME(6) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4`,
	},
}

// statements per dialect. Placeholders in order of the arguments.
type statements struct {
	created string // order_id, customer, total_cents, updated_at
	paid    string // order_id, total_cents, updated_at
}

var sqlFor = map[string]statements{
	shop.Postgres: {
		// A late order.created never moves a paid order back.
		created: `INSERT INTO projector_orders (order_id, customer, total_cents, status, events, updated_at)
VALUES ($1, $2, $3, 'created', 1, $4)
ON CONFLICT (order_id) DO UPDATE SET customer = EXCLUDED.customer,
    events = projector_orders.events + 1, updated_at = EXCLUDED.updated_at`,
		paid: `INSERT INTO projector_orders (order_id, customer, total_cents, status, events, updated_at)
VALUES ($1, '', $2, 'paid', 1, $3)
ON CONFLICT (order_id) DO UPDATE SET status = 'paid', total_cents = EXCLUDED.total_cents,
    events = projector_orders.events + 1, updated_at = EXCLUDED.updated_at`,
	},
	shop.MySQL: {
		created: `INSERT INTO projector_orders (order_id, customer, total_cents, status, events, updated_at)
VALUES (?, ?, ?, 'created', 1, ?)
ON DUPLICATE KEY UPDATE customer = VALUES(customer), events = events + 1, updated_at = VALUES(updated_at)`,
		paid: `INSERT INTO projector_orders (order_id, customer, total_cents, status, events, updated_at)
VALUES (?, '', ?, 'paid', 1, ?)
ON DUPLICATE KEY UPDATE status = 'paid', total_cents = VALUES(total_cents), events = events + 1,
    updated_at = VALUES(updated_at)`,
	},
}

// Migrate creates the inbox's tables and the projection's.
func (p *Projector) Migrate(ctx context.Context) error {
	if err := p.in.Migrate(ctx, p.db); err != nil {
		return fmt.Errorf("projector: migrate: %w", err)
	}
	for _, ddl := range schemas[p.dialect] {
		if _, err := p.db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("projector: migrate: %w", err)
		}
	}
	return nil
}
