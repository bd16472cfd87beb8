package provision

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"pidb/facts"
	"pidb/internal/fakerun"
	"pidb/inventory"
)

// TestConfigureRestoresAfterAFailedRestart: the server does not come back
// on the new drop-in; the configure step puts the old one back, restarts on
// it, and says both.
func TestConfigureRestoresAfterAFailedRestart(t *testing.T) {
	const conf = "/etc/postgresql/15/main/conf.d/90-pidb.conf"
	// Debian's: /etc/postgresql/15 and below are postgres's, so the copies
	// there are postgres's to make
	pgs := map[string]string{"/etc/postgresql/15": "postgres", "/etc/postgresql/15/main": "postgres", "/etc/postgresql/15/main/conf.d": "postgres"}
	r := &fakerun.Runner{Files: map[string]string{conf: "# the old drop-in\n"}, Owners: pgs}
	restart := "systemctl reset-failed postgresql@15-main 2>/dev/null; systemctl restart postgresql@15-main"
	r.Exact(restart, fakerun.Reply{Code: 1, Stderr: "Job for postgresql@15-main.service failed", Times: 1})
	tg := NewTarget(inventory.Host{Name: "pi4", Engine: "postgres"}, "inv.toml", r,
		facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "postgres", Version: "15.18", Running: true}}, "balanced", func(string) {})
	err := configureStep{}.Apply(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "restart with the new configuration") || !strings.Contains(err.Error(), "the previous configuration is back and postgres is running on it") {
		t.Fatalf("apply: %v", err)
	}
	ran := strings.Join(r.Ran(), "\n")
	keep := "cd / && runuser -u postgres -- sh -c 'rm -f -- " + conf + ".pidb-previous " + conf + ".pidb-none && cp -p -- " + conf + " " + conf + ".pidb-previous'"
	put := "cd / && runuser -u postgres -- sh -c 'if [ -e " + conf + ".pidb-none ]; then rm -f -- " + conf + "; elif [ -e " + conf + ".pidb-previous ]; then umask 077 && t=$(mktemp /etc/postgresql/15/main/conf.d/.90-pidb.conf.pidb-XXXXXX) || exit 1; cp -p -- " + conf + `.pidb-previous "$t" && mv -f -- "$t" ` + conf + `; rc=$?; rm -f -- "$t"; exit $rc; fi'`
	i, j := strings.Index(ran, keep), strings.Index(ran, put)
	if i < 0 || j < i || strings.Count(ran, restart) != 2 || !strings.HasSuffix(ran, "pg_isready -q") {
		t.Errorf("commands:\n%s", ran)
	}

	// and when the restore's restart fails too, the error says so
	r = &fakerun.Runner{Files: map[string]string{conf: "# the old drop-in\n"}}
	r.Exact(restart, fakerun.Reply{Code: 1, Stderr: "failed"})
	tg.Root = r
	err = configureStep{}.Apply(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "putting the previous configuration back FAILED too") {
		t.Errorf("double failure: %v", err)
	}
}

// TestConfigureUploadFails: the new drop-in cannot be written (a full
// disk): nothing was replaced, so nothing is put back and the server is
// not restarted, and the error says that it runs as it did.
func TestConfigureUploadFails(t *testing.T) {
	const conf = "/etc/postgresql/15/main/conf.d/90-pidb.conf"
	r := &fakerun.Runner{Files: map[string]string{conf: "# the old drop-in\n"},
		UploadErrs: map[string]error{conf: errors.New("pi4: upload " + conf + ": the disk that holds /etc/postgresql/15/main/conf.d is full")}}
	tg := NewTarget(inventory.Host{Name: "pi4", Engine: "postgres"}, "inv.toml", r,
		facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "postgres", Version: "15.18", Running: true}}, "balanced", func(string) {})
	err := configureStep{}.Apply(context.Background(), tg)
	if err == nil || !strings.Contains(err.Error(), "is full") || !strings.Contains(err.Error(), "nothing was changed, and postgres runs as it did") {
		t.Fatalf("apply: %v", err)
	}
	if ran := strings.Join(r.Ran(), "\n"); strings.Contains(ran, "systemctl restart") || strings.Contains(ran, `mv -f -- "$t" `+conf) {
		t.Errorf("restarted or restored for nothing:\n%s", ran)
	}
	if r.Files[conf] != "# the old drop-in\n" {
		t.Errorf("the drop-in: %q", r.Files[conf])
	}
}

// TestOneRestartForConfigureAndAccess: a run whose configure and access
// steps both write the server's configuration restarts it once, after
// both, and checks what each step wants of the restarted server.
func TestOneRestartForConfigureAndAccess(t *testing.T) {
	r := (&fakerun.Runner{Files: map[string]string{"/etc/postgresql/15/main/pg_hba.conf": "local all postgres peer\n"}}).
		Contains("pidb-server.crt", fakerun.Reply{Stdout: "no\n"}).
		Contains("SHOW ssl", fakerun.Reply{Stdout: "on\n"}).
		Contains("SHOW listen_addresses", fakerun.Reply{Stdout: "*\n"}).
		Contains("FROM pg_settings WHERE name IN", fakerun.Reply{Stdout: "shared_buffers\x00131072\x008kB\x00max_parallel_workers_per_gather\x000\x00\x00"})
	h := inventory.Host{Name: "pi4", Engine: "postgres", Address: "10.213.41.40", TLS: true, AllowFrom: []netip.Prefix{netip.MustParsePrefix("10.213.41.0/24")}}
	tg := NewTarget(h, "inv.toml", r, facts.Facts{RAMBytes: 4 << 30, CPUs: 4, Storage: "sd", Engine: facts.EngineState{Flavor: "postgres", Version: "15.18", Running: true}}, "seed", func(string) {})
	rep, err := Run(context.Background(), tg, []Step{configureStep{}, accessStep{}}, false)
	if err != nil {
		t.Fatal(err)
	}
	ran := strings.Join(r.Ran(), "\n")
	if n := strings.Count(ran, "systemctl restart postgresql@15-main"); n != 1 || strings.Join(rep.Changed, ",") != "configure,access" {
		t.Errorf("%d restarts, changed %v; want one, after configure and access:\n%s", n, rep.Changed, ran)
	}
	if i, j := strings.Index(ran, "upload /etc/postgresql/15/main/pg_hba.conf"), strings.Index(ran, "systemctl restart"); i < 0 || j < i {
		t.Errorf("the restart came before the access step wrote pg_hba.conf:\n%s", ran)
	}
}
