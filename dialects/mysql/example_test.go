package mysql_test

import (
	"fmt"

	"github.com/jitoutbox/jitoutbox/dialects/mysql"
)

func Example() {
	d, err := mysql.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name(), d.Table(), d.MaxInsertRows())
	// Output: mysql outbox 4369
}
