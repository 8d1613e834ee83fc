package shop

import "time"

// Created is the payload of EventCreated.
type Created struct {
	OrderID    string    `json:"order_id"`
	Customer   string    `json:"customer"`
	TotalCents int64     `json:"total_cents"`
	CreatedAt  time.Time `json:"created_at"`
}

// Paid is the payload of EventPaid.
type Paid struct {
	OrderID    string    `json:"order_id"`
	TotalCents int64     `json:"total_cents"`
	PaymentRef string    `json:"payment_ref"`
	PaidAt     time.Time `json:"paid_at"`
}
