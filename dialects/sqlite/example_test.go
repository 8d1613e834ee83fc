package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/jitoutbox/jitoutbox/dialects/sqlite"
	"github.com/jitoutbox/jitoutbox/internal/testdb"
)

func Example() {
	dir, err := os.MkdirTemp("", "jitoutbox-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", testdb.SQLiteDSN(filepath.Join(dir, "app.db")))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()

	d, err := sqlite.New(sqlite.WithTable("events_outbox"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := d.Migrate(context.Background(), db); err != nil {
		fmt.Println(err)
		return
	}
	s, err := d.Stats(context.Background(), db)
	fmt.Println(d.Name(), d.Table(), s.Pending, err)
	// Output: sqlite events_outbox 0 <nil>
}

func ExampleWithTable() {
	_, err := sqlite.New(sqlite.WithTable("outbox; DROP TABLE users"))
	fmt.Println(err != nil)
	// Output: true
}
