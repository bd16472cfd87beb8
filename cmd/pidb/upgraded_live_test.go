package main

import (
	"strings"
	"testing"

	"pidb/internal/labtest"
)

// TestUpgradedHostOnTheLab: a Pi whose release was upgraded in place has
// the new release's PostgreSQL beside its old cluster (Debian makes no
// cluster for the new major while one exists), and, once someone makes
// one (pg_createcluster, or a pg_upgradecluster under way), the new
// major's cluster on 5433. On the lab's ubuntu release (trixie's
// PostgreSQL 17, unstable's 18): PostgreSQL 17 installed by hand and
// provisioned, then PostgreSQL 18 installed beside it, then an 18
// cluster made on 5433: pidb goes on working on the 17 cluster, which
// holds the data and where clients connect: provision changes nothing,
// says 17, and writes no drop-in for 18.
func TestUpgradedHostOnTheLab(t *testing.T) {
	reserved := labtest.Reserve(t, "pi4")
	t.Parallel()
	inv := reserved.FreshOn(t, "ubuntu")
	h := inv.Hosts[0]
	root := labtest.RootHost(t, inv, h.Name)
	apt := "DEBIAN_FRONTEND=noninteractive apt-get -q install -y "
	labtest.MustSSH(t, root, "apt-get -q update >/dev/null && "+apt+"postgresql-17 >/dev/null")
	code, res, errOut := provisionLab(t, "-i", inv.Path)
	if code != 0 || !strings.HasPrefix(res[h.Name].EngineVersion, "17.") {
		t.Fatalf("provision with PostgreSQL 17: exit %d %+v\n%s", code, res[h.Name], errOut)
	}
	clusters := func() string {
		return strings.TrimSpace(labtest.MustSSH(t, root, "pg_lsclusters --no-header | awk '{print $1, $3, $4}'"))
	}
	for _, step := range []struct{ what, cmd, want string }{
		{"PostgreSQL 18 installed beside it", apt + "postgresql-18 >/dev/null", "17 5432 online"},
		{"an 18 cluster made on 5433", "pg_createcluster 18 main --start >/dev/null", "17 5432 online\n18 5433 online"},
	} {
		labtest.MustSSH(t, root, step.cmd)
		if got := clusters(); got != step.want {
			t.Fatalf("%s: pg_lsclusters %q, want %q", step.what, got, step.want)
		}
		code, res, errOut = provisionLab(t, "-i", inv.Path)
		if code != 0 || !strings.HasPrefix(res[h.Name].EngineVersion, "17.") || len(res[h.Name].Changed) != 0 {
			t.Errorf("%s: provision: exit %d %+v\n%s", step.what, code, res[h.Name], errOut)
		}
		if got := labtest.MustSSH(t, root, "ls /etc/postgresql/18/main/conf.d/ 2>/dev/null; true"); strings.Contains(got, "90-pidb.conf") {
			t.Errorf("%s: a drop-in was written for 18: %q", step.what, got)
		}
	}
}
