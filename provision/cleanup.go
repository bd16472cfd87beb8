package provision

import (
	"context"
	"fmt"

	"pidb/dbms"
	"pidb/engine"
)

// DropBenchDatabase drops pidb's own benchmark database (`pidb bench
// cleanup`), with every workload's tables in it, as the server's
// administrator over SSH. A database of that name that pidb did not make is
// left alone with a *ForeignDatabaseError: pidb's mark is read from the
// server's structured output (existing), where no other database's comment
// or name can pass for it. It reports whether there was one to drop; the
// next provision makes it again.
func DropBenchDatabase(ctx context.Context, t *Target) (bool, error) {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return false, err
	}
	st, err := existing(ctx, t, e)
	if err != nil {
		return false, err
	}
	there, err := benchDatabaseState(st)
	if err != nil || !there {
		return false, err
	}
	sql := "DROP DATABASE " + engine.BenchDatabase + " WITH (FORCE)" // ends the sessions in it, as pgbench's clients may have left some
	if e.Flavor != dbms.Postgres {
		sql = "DROP DATABASE `" + engine.BenchDatabase + "`"
	}
	if _, err := t.run(ctx, e.Client(sql)); err != nil {
		return false, fmt.Errorf("drop database %s: %w", engine.BenchDatabase, err)
	}
	return true, nil
}
