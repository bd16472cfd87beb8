// Package job is pidb's run pipeline below the command line: for one host,
// resolve a workload's plan from the configuration, prepare its data,
// connect (directly or through the SSH connection), run it with the
// thermal sampler beside it and the idle time around it, build the saved
// run and save it. `pidb bench`, `pidb validate` (with its checks and
// verdict on top, in Validate) and `pidb demo` call it; the command line
// only turns flags into a Plan and prints what comes back.
package job

import (
	"context"
	"path/filepath"
	"sync"

	"pidb/bench/sqldb"
	"pidb/config"
	"pidb/inventory"
	"pidb/remote"
	"pidb/tune"
	"pidb/usage"
)

// usagef is bad input found before any host is touched: exit code 2.
func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// Conn is a host's SSH connection as the pipeline uses it.
type Conn struct {
	User remote.Runner // the login user: facts, thermal readings
	Root remote.Runner // root (sudo -n): the server's administrator
	// Forward opens a local listener whose connections reach addr on the
	// host (ssh -L); stop closes it.
	Forward func(addr string) (local string, stop func(), err error)
}

// Over is the Conn of an SSH client.
func Over(c *remote.Client) Conn { return Conn{User: c, Root: c.AsRoot(), Forward: c.Forward} }

// Env is what every host's run shares.
type Env struct {
	Inventory *inventory.Inventory
	Out       string // save runs under this folder
	Version   string // pidb's, saved with every run
	// Alongside is how many other hosts' workloads run at the same time
	// from this controller, at most: saved with every run
	Alongside int
	// ReadSettings reads the live settings recorded with a run; nil: from
	// the server, over the workload's connection (sqldb.DB.Settings).
	ReadSettings func(ctx context.Context, db sqldb.DB, mysqlNames []string) ([][2]string, error)
	// Secrets is held by a cluster's host while it reads and writes the
	// cluster's passwords (provision.Cluster.Secrets): the hosts of a
	// MariaDB cluster each make their accounts, at once. nil: none.
	Secrets *sync.Mutex
}

// LoadInventory reads an inventory with everything pidb can check before
// it touches a host: the settings sections' keys (package config), the
// identity files, the presets' names, and each
// [host.settings] against the tuner's catalogue for its engine.
func LoadInventory(path string) (*inventory.Inventory, error) {
	return inventory.Load(path, inventoryChecks()...)
}

// ParseInventory is LoadInventory of text, as if read from the file at
// path (its errors name it, its relative paths resolve beside it): an
// inventory pidb is about to write, checked before it is.
func ParseInventory(path, text string) (*inventory.Inventory, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	inv, err := inventory.Parse(path, filepath.Dir(abs), text, inventoryChecks()...)
	if err != nil {
		return nil, err
	}
	inv.Path = abs
	return inv, nil
}

// inventoryChecks are every check pidb makes of an inventory before it
// touches a host.
func inventoryChecks() []inventory.Option {
	return []inventory.Option{config.Schema(), inventory.Keys(remote.CheckKey), inventory.Presets(string(tune.Balanced), tune.PresetNames()...), inventory.Settings(tune.Check), inventory.Durability(tune.Durability)}
}
