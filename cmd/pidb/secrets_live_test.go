package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pidb/internal/labtest"
	"pidb/inventory"
	"pidb/secrets"
)

// TestPasswordsStayOffTheServersLogs provisions pi4 (PostgreSQL) and pi3
// (MariaDB) with every statement logged (log_min_duration_statement = 0;
// the slow log with long_query_time = 0), makes the accounts, changes
// every password (new secrets: the accounts step sets them again), and
// then searches the servers' logs, the journal and what pidb printed
// (tables, --json, dry-run plans, the commands --verbose shows) for any of
// the passwords: none is there. The logs did log: pidb's own
// read-back queries are in them. On a Pi 4 and a Pi 3 of its own (clones
// of provisioned ones), whose settings and passwords it changes.
func TestPasswordsStayOffTheServersLogs(t *testing.T) {
	t.Parallel()
	inv := labtest.CloneAsBoard(t, "pi4", "pi3")
	src, err := os.ReadFile(inv.Path)
	if err != nil {
		t.Fatal(err)
	}
	block := func(name, engine string) string { return hostBlock(labtest.Host(t, inv, name), engine) }
	logged := strings.Replace(string(src), block("pi3", "mysql"),
		block("pi3", "mysql")+"\n[host.settings]\nslow_query_log = true\nlong_query_time = 0\n[[host.database]]\nname = \"shop\"\nowner = \"shopapp\"", 1)
	logged = strings.Replace(logged, block("pi4", "postgres"),
		block("pi4", "postgres")+"\n[host.settings]\nlog_min_duration_statement = 0\n[[host.database]]\nname = \"shop\"\nowner = \"shopapp\"", 1)
	if logged == string(src) {
		t.Fatal("the lab's inventory is not as this test expects")
	}
	defer func() { // the lab's own settings again
		if code, _, errOut := runPidb(t, "provision", "-i", inv.Path, "--limit", "pi4,pi3"); code != 0 {
			t.Errorf("provision the lab back: exit %d\n%s", code, errOut)
		}
	}()

	var outputs []string
	var passwords []string
	for round := 0; round < 2; round++ {
		// each round's inventory in a folder of its own: the store keeps
		// passwords by the inventory's path, so the second round's secrets
		// are new, and every password changes
		p := filepath.Join(t.TempDir(), "logged.toml")
		if err := os.WriteFile(p, []byte(logged), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runPidb(t, "provision", "-i", p, "--limit", "pi4,pi3", "--json", "--verbose")
		if code != 0 {
			t.Fatalf("provision round %d: exit %d\n%s\n%s", round, code, out, errOut)
		}
		if !strings.Contains(errOut, "pi4: $ ") || !strings.Contains(errOut, "pi3: $ ") {
			t.Errorf("--verbose showed no command:\n%s", errOut)
		}
		outputs = append(outputs, out, errOut)
		_, out, errOut = runPidb(t, "provision", "-i", p, "--limit", "pi4,pi3", "--dry-run", "--json")
		outputs = append(outputs, out, errOut)
		_, out, errOut = runPidb(t, "provision", "-i", p, "--limit", "pi4,pi3", "--dry-run")
		outputs = append(outputs, out, errOut)
		for _, h := range []string{"pi4", "pi3"} {
			sec, err := secrets.Load(p, h)
			if err != nil || sec.Pidb == "" || sec.Databases["shop"].Password == "" {
				t.Fatalf("%s: secrets %+v, %v", h, sec, err)
			}
			passwords = append(passwords, sec.Pidb, sec.Databases["shop"].Password)
		}
		// the application logs in with its new password
		if u := credentials(t, p, "pi4", "shop"); pgQuery(t, u, "SELECT current_user") != "shopapp" {
			t.Errorf("round %d: shopapp cannot log in to pi4", round)
		}
		if u := credentials(t, p, "pi3", "shop"); !strings.HasPrefix(myQuery(t, u, "SELECT CURRENT_USER()"), "shopapp@") {
			t.Errorf("round %d: shopapp cannot log in to pi3", round)
		}
	}

	root := func(name string) inventory.Host { return labtest.RootHost(t, inv, name) }
	logs := map[string]string{
		"pi4": "cat /var/log/postgresql/*.log",
		"pi3": "cat /var/log/mysql/*.log /var/lib/mysql/*.log 2>/dev/null; true",
	}
	proof := map[string]string{"pi4": "duration:", "pi3": "Query_time:"}
	for _, h := range []string{"pi4", "pi3"} {
		text := labtest.MustSSH(t, root(h), logs[h]) + labtest.MustSSH(t, root(h), "journalctl --no-pager -o cat 2>/dev/null; true")
		if !strings.Contains(text, proof[h]) {
			t.Errorf("%s: the log has no %q: it logged nothing, and the search proves nothing", h, proof[h])
		}
		for _, pw := range passwords {
			if strings.Contains(text, pw) {
				t.Errorf("%s: a generated password is in the server's log or the journal", h)
			}
		}
	}
	for _, o := range outputs {
		for _, pw := range passwords {
			if strings.Contains(o, pw) {
				t.Errorf("a generated password is in pidb's output")
			}
		}
	}
}
