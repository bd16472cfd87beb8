package mysqlx

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestErrorKind(t *testing.T) {
	if k, re := ErrorKind(fmt.Errorf("query: %w", &mysql.MySQLError{Number: 1213, Message: "Deadlock"})); k != "mysql 1213" || re {
		t.Errorf("deadlock: %q %v", k, re)
	}
	if k, re := ErrorKind(errors.New("read tcp: connection reset by peer")); k != "connection" || !re {
		t.Errorf("reset: %q %v", k, re)
	}
}
