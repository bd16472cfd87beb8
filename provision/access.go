package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"sort"
	"strings"

	"pidb/dbms"
	"pidb/engine"
	"pidb/remote"
)

// accessStep opens the database port to the inventory's allow_from and to
// nothing else. Without allow_from the server listens on localhost only and
// pidb's workloads go through the SSH connection.
type accessStep struct{}

func (accessStep) Name() string { return "access" }

const (
	hbaBegin = "# BEGIN pidb: access from the inventory's allow_from (pidb rewrites this block)"
	hbaEnd   = "# END pidb"
)

// accessPath is the drop-in that makes the server listen on the network. On
// MySQL it must sort after Ubuntu's mysqld.cnf, which binds to 127.0.0.1.
func accessPath(e engine.Engine) string {
	switch e.Flavor {
	case dbms.Postgres:
		return "/etc/postgresql/" + e.Major + "/main/conf.d/91-pidb-access.conf"
	case dbms.MySQL:
		return "/etc/mysql/mysql.conf.d/zz-pidb-access.cnf"
	}
	return "/etc/mysql/mariadb.conf.d/91-pidb-access.cnf"
}

func hbaPath(e engine.Engine) string { return "/etc/postgresql/" + e.Major + "/main/pg_hba.conf" }

// accessFiles returns the files the access step wants, and the host's TLS
// state (read only when the server listens on the network).
func accessFiles(ctx context.Context, t *Target, e engine.Engine) ([]fileChange, tlsState, error) {
	conf := ""
	var st tlsState
	if t.listens() {
		var err error
		if st, err = tlsOf(ctx, t, e); err != nil {
			return nil, st, err
		}
		var cidrs []string
		for _, p := range t.Host.AllowFrom {
			cidrs = append(cidrs, p.String())
		}
		for _, p := range t.peers() {
			cidrs = append(cidrs, p.String()+" (replication)")
		}
		conf = "# Managed by pidb: the server listens on the network; only " + strings.Join(cidrs, ", ") + " may connect"
		if needsTLS(t) {
			conf += ", with TLS"
		}
		conf += ".\n"
		if e.Flavor == dbms.Postgres {
			conf += "listen_addresses = '*'\n"
		} else {
			conf += "[mysqld]\nbind-address = 0.0.0.0\n"
		}
		conf += tlsConf(e, st, needsTLS(t))
	}
	files := []fileChange{{accessPath(e), conf}}
	if e.Flavor == dbms.Postgres {
		have, err := t.Root.ReadFile(ctx, hbaPath(e))
		if err != nil {
			return nil, st, err
		}
		files = append(files, fileChange{hbaPath(e), withHBABlock(string(have), t.Host.AllowFrom, accountsOf(t), t.Host.TLS, t.peers())})
	}
	return files, st, nil
}

// withHBABlock replaces pidb's block in pg_hba.conf: from each allowed CIDR,
// each of pidb's accounts may reach its own database and no other, with a
// scram-sha-256 password, over TLS (hostssl) unless tls is false (host:
// with TLS or without); from each of the cluster's other hosts (peers),
// its replication account may replicate, over TLS, and do nothing else.
func withHBABlock(hba string, allow []netip.Prefix, accounts []account, tls bool, peers []netip.Prefix) string {
	var kept []string
	in := false
	for _, line := range strings.SplitAfter(hba, "\n") {
		switch strings.TrimRight(line, "\n") {
		case hbaBegin:
			in = true
			continue
		case hbaEnd:
			if in {
				in = false
				continue
			}
		}
		if !in && line != "" {
			kept = append(kept, line)
		}
	}
	out := strings.Join(kept, "")
	if len(allow) == 0 && len(peers) == 0 {
		return out
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	out += hbaBegin + "\n"
	kind := "host"
	if tls {
		kind = "hostssl"
	}
	for _, p := range allow {
		for _, a := range accounts {
			// quoted: a quoted name is a name, never one of pg_hba's keywords
			out += fmt.Sprintf("%-7s %-15s %-15s %-23s scram-sha-256\n", kind, pgIdent(a.database), pgIdent(a.user), p.String())
		}
	}
	for _, p := range peers {
		// replication unquoted: the keyword, the replication connections
		out += fmt.Sprintf("%-7s %-15s %-15s %-23s scram-sha-256\n", "hostssl", "replication", pgIdent(ReplicationUser), p.String())
	}
	return out + hbaEnd + "\n"
}

func (accessStep) Check(ctx context.Context, t *Target) (Change, error) {
	e, err := engine.Of(t.Facts)
	if err != nil {
		if !t.listens() {
			return Change{}, nil
		}
		return Change{Needed: true, Note: "after the install: listen on the network for " + prefixes(t.network())}, nil
	}
	files, st, err := accessFiles(ctx, t, e)
	if err != nil {
		return Change{}, err
	}
	ch := Change{Note: tlsNote(e, st, needsTLS(t), t.Host.Address)}
	if st.mustMake(needsTLS(t)) {
		ch.Needed = true
		cert, _, _ := tlsFiles(e)
		user, err := remote.FolderUser(ctx, t.Root, path.Dir(cert))
		if err != nil {
			return Change{}, err
		}
		ch.Commands = []string{remote.AsUser(user, makeCertCmd(e, t.Host.Address, user))}
	}
	for _, f := range files {
		have, err := t.Root.ReadFile(ctx, f.path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Change{}, err
		}
		if string(have) != f.want {
			ch.Needed = true
			ch.Diff += unified(f.path, string(have), f.want)
		}
	}
	if !ch.Needed && t.Facts.Engine.Running {
		// written, but is it what the server runs? (a run cut off between
		// the write and the restart leaves the files and the old state)
		var stale notRunning
		if err := accessLive(ctx, t, e, st); errors.As(err, &stale) {
			ch.Needed, ch.Note = true, "the files are written but the server does not run them ("+err.Error()+"): a restart"
		} else if err != nil {
			return Change{}, err
		}
	}
	if ch.Needed {
		ch.Commands = append(ch.Commands, e.CheckCmd(), e.RestartCmd())
	}
	if cmds, _ := ufwCommands(ctx, t, e); len(cmds) > 0 {
		ch.Needed = true
		ch.Commands = append(ch.Commands, cmds...)
	}
	return ch, nil
}

func (accessStep) Apply(ctx context.Context, t *Target) error {
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	files, st, err := accessFiles(ctx, t, e)
	if err != nil {
		return err
	}
	if st.mustMake(needsTLS(t)) {
		t.Step("making a self-signed certificate for TLS")
		cert, _, _ := tlsFiles(e)
		mk := func(user string) string { return makeCertCmd(e, t.Host.Address, user) }
		if _, err := t.inFolderAs(ctx, cert, mk); err != nil {
			return fmt.Errorf("make a certificate for TLS: %w", err)
		}
	}
	verify := func() error { return accessLive(ctx, t, e, st) }
	if err := replaceFiles(ctx, t, e, files, verify); err != nil {
		return err
	}
	cmds, err := ufwCommands(ctx, t, e)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if _, err := t.run(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// accessLive checks that the running server listens as the inventory says
// (on the network with allow_from, else on localhost) and, where the
// network's logins need it, accepts TLS, with pidb's certificate as its
// file is where st says the server runs that.
func accessLive(ctx context.Context, t *Target, e engine.Engine, st tlsState) error {
	want := "localhost"
	sql := "SHOW listen_addresses"
	if e.Flavor != dbms.Postgres {
		want, sql = "127.0.0.1", "SELECT @@bind_address"
	}
	if t.listens() {
		want = map[bool]string{true: "*", false: "0.0.0.0"}[e.Flavor == dbms.Postgres]
	}
	out, err := t.run(ctx, e.Client(sql))
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(out); got != want && !(want == "127.0.0.1" && got == "localhost") {
		return notRunning(fmt.Sprintf("the server listens on %q, not %q", got, want))
	}
	if needsTLS(t) {
		on, err := serverTLSOn(ctx, t, e)
		if err != nil {
			return err
		}
		if !on {
			return notRunning("the server does not accept TLS: it did not load the certificate")
		}
	}
	if t.listens() && st.inUse(needsTLS(t)) {
		out, err := t.run(ctx, servedCertCmd(e))
		if err != nil {
			return err
		}
		if ok, why := servesFile(out); !ok {
			return notRunning(why)
		}
	}
	return nil
}

// notRunning is a server that does not run what its files say.
type notRunning string

func (e notRunning) Error() string { return string(e) }

// ufwCommands makes ufw, where it is active, allow the engine's port from
// each allowed network in a rule of pidb's own (comment 'pidb'), and
// deletes pidb's rules for the port that allow_from no longer names. The
// rules are read as ufw lists the ones added (`ufw show added`: one rule a
// line, as the command that made it), so a rule is matched whole, never by
// a port and a network found apart in the output. A rule someone added by
// hand that allows the same is taken as it is, and never deleted.
func ufwCommands(ctx context.Context, t *Target, e engine.Engine) ([]string, error) {
	out, err := t.run(ctx, "command -v ufw >/dev/null && ufw status && ufw show added || true")
	if err != nil || !strings.Contains(out, "Status: active") {
		return nil, err
	}
	return ufwPlan(out, e.Port(), t.network()), nil
}

// ufwPlan is ufwCommands' decision from what ufw printed.
func ufwPlan(out string, port int, allow []netip.Prefix) []string {
	rule := func(from string) string { return fmt.Sprintf("ufw allow from %s to any port %d proto tcp", from, port) }
	const mark = " comment 'pidb'"
	have := map[string]bool{} // a rule -> pidb's
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if r, ok := strings.CutSuffix(line, mark); ok {
			have[r] = true
		} else if strings.HasPrefix(line, "ufw ") && !have[line] {
			have[line] = false
		}
	}
	var cmds []string
	wanted := map[string]bool{}
	for _, p := range allow {
		r := rule(p.String())
		wanted[r] = true
		if _, ok := have[r]; !ok {
			cmds = append(cmds, remote.Command("ufw", "allow", "from", p.String(), "to", "any", "port", fmt.Sprint(port), "proto", "tcp", "comment", "pidb"))
		}
	}
	var gone []string
	for r, pidbs := range have {
		from, ok := strings.CutPrefix(r, "ufw allow from ")
		from, ok2 := strings.CutSuffix(from, fmt.Sprintf(" to any port %d proto tcp", port))
		if pidbs && ok && ok2 && !wanted[r] && !strings.ContainsAny(from, " '") {
			gone = append(gone, remote.Command("ufw", "delete", "allow", "from", from, "to", "any", "port", fmt.Sprint(port), "proto", "tcp"))
		}
	}
	sort.Strings(gone)
	return append(cmds, gone...)
}

func prefixes(ps []netip.Prefix) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.String())
	}
	return strings.Join(s, ", ")
}
