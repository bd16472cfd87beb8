package labtest

import (
	"testing"

	"pidb/lab"
)

func TestPGIsTheDefaultReleases(t *testing.T) {
	if got := lab.Default().Postgres; got != PG || got == "" {
		t.Errorf("the lab's default release %s installs PostgreSQL %q; labtest.PG says %q", lab.DefaultRelease, got, PG)
	}
}
