package postgres_test

import (
	"fmt"
	"strings"

	"github.com/jitoutbox/jitoutbox/dialects/postgres"
)

// Example prints the first statement of the schema, e.g. for a migration
// tool.
func Example() {
	d, err := postgres.New(postgres.WithTable("app.outbox"))
	if err != nil {
		fmt.Println(err)
		return
	}
	first, _, _ := strings.Cut(d.Schema(), "\n")
	fmt.Println(first)
	// Output: CREATE TABLE IF NOT EXISTS app.outbox (
}
