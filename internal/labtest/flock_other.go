//go:build !unix

package labtest

import (
	"errors"
	"os"
)

// flock: the lab runs on Linux only; elsewhere its tests skip before this.
func flock(*os.File, bool, bool) (bool, error) {
	return false, errors.New("lab leases need a Unix system")
}
