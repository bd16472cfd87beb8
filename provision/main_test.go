package provision

import (
	"os"
	"testing"

	"pidb/internal/labtest"
)

// TestMain gives the tests a password store of their own (labtest.Main):
// the lab tests run side by side and cannot each set their environment.
func TestMain(m *testing.M) { os.Exit(labtest.Main(m)) }
