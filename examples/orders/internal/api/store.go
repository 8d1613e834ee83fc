package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jitoutbox/jitoutbox/examples/orders/internal/shop"
)

// Order statuses.
const (
	StatusCreated = "created"
	StatusPaid    = "paid"
)

// Order is an order as the API returns it.
type Order struct {
	ID         string     `json:"id"`
	Customer   string     `json:"customer"`
	TotalCents int64      `json:"total_cents"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	PaidAt     *time.Time `json:"paid_at,omitempty"`
	PaymentRef string     `json:"payment_ref,omitempty"`
}

var errNotFound = errors.New("order not found")

// schemas is the business table per dialect.
var schemas = map[string]string{
	shop.Postgres: `CREATE TABLE IF NOT EXISTS shop_orders (
    id          TEXT PRIMARY KEY,
    customer    TEXT NOT NULL,
    total_cents BIGINT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    paid_at     TIMESTAMPTZ,
    payment_ref TEXT
)`,
	shop.MySQL: `CREATE TABLE IF NOT EXISTS shop_orders (
    id          VARCHAR(36) NOT NULL PRIMARY KEY,
    customer    VARCHAR(255) NOT NULL,
    total_cents BIGINT NOT NULL,
    status      VARCHAR(16) NOT NULL,
    created_at  DATETIME(6) NOT NULL,
    paid_at     DATETIME(6) NULL,
    payment_ref VARCHAR(255) NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4`,
}

// store runs the service's own SQL.
type store struct {
	dialect string
}

func (s store) p(n int) string { return shop.Placeholder(s.dialect, n) }

// migrate creates the business table.
func (s store) migrate(ctx context.Context, db *sql.DB) error {
	ddl, ok := schemas[s.dialect]
	if !ok {
		return fmt.Errorf("%w: %q", shop.ErrUnknownDialect, s.dialect)
	}
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return fmt.Errorf("create shop_orders: %w", err)
	}
	return nil
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s store) insert(ctx context.Context, q querier, o *Order) error {
	_, err := q.ExecContext(ctx, `INSERT INTO shop_orders (id, customer, total_cents, status, created_at) VALUES (`+
		s.p(1)+`, `+s.p(2)+`, `+s.p(3)+`, `+s.p(4)+`, `+s.p(5)+`)`,
		o.ID, o.Customer, o.TotalCents, o.Status, o.CreatedAt)
	return err
}

// get reads an order; forUpdate locks its row until the transaction ends.
func (s store) get(ctx context.Context, q querier, id string, forUpdate bool) (*Order, error) {
	query := `SELECT id, customer, total_cents, status, created_at, paid_at, payment_ref FROM shop_orders WHERE id = ` + s.p(1)
	if forUpdate {
		query += ` FOR UPDATE`
	}
	var (
		o    Order
		paid sql.NullTime
		ref  sql.NullString
	)
	err := q.QueryRowContext(ctx, query, id).Scan(&o.ID, &o.Customer, &o.TotalCents, &o.Status, &o.CreatedAt, &paid, &ref)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	o.CreatedAt = o.CreatedAt.UTC()
	if paid.Valid {
		t := paid.Time.UTC()
		o.PaidAt = &t
	}
	o.PaymentRef = ref.String
	return &o, nil
}

func (s store) markPaid(ctx context.Context, q querier, id, ref string, at time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE shop_orders SET status = `+s.p(1)+`, paid_at = `+s.p(2)+`, payment_ref = `+s.p(3)+
		` WHERE id = `+s.p(4), StatusPaid, at, ref, id)
	return err
}
