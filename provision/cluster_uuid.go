package provision

import (
	"context"
	"fmt"
	"path"
	"time"

	"pidb/engine"
	"pidb/facts"
	"pidb/remote"
)

// A Pi whose card was cloned from another's holds that Pi's MySQL
// server_uuid (auto.cnf in the data directory, made at the first start).
// A replica with its primary's stops at once ("source and replica have
// equal MySQL server UUIDs"), and GTIDs would mix the two servers' own
// transactions. Before a replica is seeded, one with its primary's gets
// its own: auto.cnf removed by the data directory's owner, then a
// restart, at which MySQL makes a new one. (MariaDB has no server_uuid:
// its GTIDs carry the server_id, which pidb sets from the address.)

// uuidQuery reads a MySQL server's UUID and its data directory.
const uuidQuery = "SELECT @@server_uuid, @@datadir"

// ownUUID gives the replica t a server_uuid of its own where it has the
// primary's (reached through from).
func ownUUID(ctx context.Context, t *Target, e engine.Engine, from remote.Runner) error {
	read := func(r remote.Runner) ([]string, error) {
		res, err := r.Run(ctx, e.Query(uuidQuery))
		if err != nil {
			return nil, err
		}
		rows, err := e.Rows(string(res.Stdout), 2)
		if err != nil || len(rows) != 1 {
			return nil, fmt.Errorf("%d rows, %v", len(rows), err)
		}
		return rows[0], nil
	}
	mine, err := read(t.Root)
	if err != nil {
		return fmt.Errorf("read the server's UUID: %w", err)
	}
	theirs, err := read(from)
	if err != nil {
		return fmt.Errorf("read %s's server UUID: %w", t.Cluster.Primary.Name, err)
	}
	if mine[0] != theirs[0] {
		return nil
	}
	dir := path.Clean(mine[1])
	if err := facts.CheckPath(dir); err != nil {
		return fmt.Errorf("the server's data directory: %w", err)
	}
	t.Step(fmt.Sprintf("%s's server_uuid is %s's (a card cloned from it): a new one (auto.cnf removed, the server restarted)", t.Host.Name, t.Cluster.Primary.Name))
	auto := path.Join(dir, "auto.cnf")
	if _, err := t.inFolder(ctx, auto, "rm -f -- "+remote.Quote(auto)); err != nil {
		return fmt.Errorf("remove %s: %w", auto, err)
	}
	if _, err := t.run(ctx, e.RestartCmd()); err != nil {
		return fmt.Errorf("restart the server for a new server_uuid: %w", err)
	}
	return t.waitFor(ctx, e.ReadyCmd(), 60*time.Second)
}
