package labtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"pidb/inventory"
	"pidb/lab"
)

// Leases: lab tests run at the same time (t.Parallel, and go test's
// packages side by side), so each takes the hosts it uses for as long as
// it runs. A lease is a lock on a file in the lab's leases folder (flock:
// released when the test ends or its process dies); a test takes all of
// its leases in one call, in name order, so two tests never wait for each
// other crosswise.

// Simulator is the lease of the thermal simulator's speed, which is one
// for the whole lab: a test that changes it (lab up --thermal-speed), holds
// the simulator still, or asserts on heat takes it as well as its hosts.
const Simulator = "thermal-simulator"

// Lease takes the named lab hosts (and Simulator, if named) for the test
// alone, waiting while another test has any of them, and returns an
// inventory of just those hosts, in the order given, in the test's own
// folder: the lab's key and known_hosts, as `pidb lab up` writes it (nil
// for the simulator alone).
func Lease(t testing.TB, names ...string) *inventory.Inventory {
	t.Helper()
	return lease(t, true, names)
}

// Share is Lease for a test that only reads the hosts: any number of
// sharing tests hold them at once, and none that leases them alone.
func Share(t testing.TB, names ...string) *inventory.Inventory {
	t.Helper()
	return lease(t, false, names)
}

func lease(t testing.TB, alone bool, names []string) *inventory.Inventory {
	t.Helper()
	Inventory(t) // the lab is up, or skip
	l := Lab(t)
	if err := take(t, l, alone, names); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, n := range names {
		if n != Simulator {
			hosts = append(hosts, n)
		}
	}
	if len(hosts) == 0 {
		return nil // the simulator alone
	}
	return InventoryOf(t, hosts...)
}

// take locks the lease files of names, sorted, and releases them when the
// test ends.
func take(t testing.TB, l *lab.Lab, alone bool, names []string) error {
	t.Helper()
	sorted := append([]string{}, names...)
	sort.Strings(sorted)
	var held []*os.File
	t.Cleanup(func() {
		for _, f := range held {
			f.Close()
		}
	})
	began := time.Now()
	for i, n := range sorted {
		if i > 0 && n == sorted[i-1] {
			continue
		}
		if _, ok := lab.BoardNamed(n); !ok && n != Simulator {
			return fmt.Errorf("lease: no lab host %q", n)
		}
		f, err := leaseFile(l, n)
		if err != nil {
			return err
		}
		held = append(held, f)
		if ok, err := flock(f, alone, false); err != nil {
			return fmt.Errorf("lease %s: %w", n, err)
		} else if ok {
			continue
		}
		t.Logf("waiting for %s: another test has it", n)
		if _, err := flock(f, alone, true); err != nil {
			return fmt.Errorf("lease %s: %w", n, err)
		}
	}
	loggedWait(t, began, strings.Join(sorted, ", "))
	return nil
}

// loggedWait logs how long the test waited for the lab's hosts since
// began, when it waited a second or more, in the words scripts/test.sh's
// summary (internal/testsum) finds: its slowest tests show that time apart
// from their own.
func loggedWait(t testing.TB, began time.Time, what string) {
	t.Helper()
	if d := time.Since(began); d >= time.Second {
		t.Logf("waited %.1fs for the lab's hosts: %s", d.Seconds(), what)
	}
}

// leaseFile opens the lease file called name in the lab's leases folder,
// making both if they are not there; a lock on it is the lease.
func leaseFile(l *lab.Lab, name string) (*os.File, error) {
	dir := filepath.Join(l.Dir, "leases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_RDWR, 0o644)
}

// InventoryOf writes an inventory of the named lab hosts, in that order, in
// the test's folder and loads it; each must be up. It takes no lease.
func InventoryOf(t testing.TB, names ...string) *inventory.Inventory {
	t.Helper()
	all := Inventory(t)
	var boards []lab.Board
	for _, n := range names {
		b, ok := lab.BoardNamed(n)
		if !ok {
			t.Fatalf("no lab host %q", n)
		}
		Host(t, all, n) // up: the lab's own inventory has it
		boards = append(boards, b)
	}
	return writeInventory(t, boards)
}

// writeInventory writes the lab's inventory of boards in the test's folder
// and loads it.
func writeInventory(t testing.TB, boards []lab.Board) *inventory.Inventory {
	t.Helper()
	l := Lab(t)
	path := filepath.Join(t.TempDir(), "inventory.toml")
	if err := os.WriteFile(path, []byte(lab.Inventory(boards, l.KeyPath(), l.KnownHostsPath())), 0o644); err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// snapshotPrefix names the snapshots the lab tests take of a provisioned
// host of each board: labtest-pi4, labtest-pi3, labtest-zero.
const snapshotPrefix = "labtest-"

// Clone boots one host of each board kind named ("pi4", "pi3", "zero") for
// the test alone, from a snapshot of a host of that board as `pidb
// provision` left it with the lab's inventory: a provisioned Pi of the
// test's own, to break as it likes, without apt installing anything. Each
// gets the highest number of its board that no other test holds (pi4-14,
// then pi4-13), and is removed, disk and all, when the test ends. The
// first clone of a board in a lab takes the snapshot: it boots a fresh
// host and provisions it (with `pidb`, built from this module, or
// $PIDB_BIN), then goes on as the clone. scripts/test.sh takes them
// again when a run begins. A clone's disk is its own layer over the
// snapshot's (lab.UpFrom), so it costs no copy. The inventory has the clones, in the order
// of kinds.
func Clone(t testing.TB, kinds ...string) *inventory.Inventory {
	t.Helper()
	return own(t, kinds, true)
}

// FreshAsBoard is Fresh with each host named in the test's inventory by
// its board ("pi4", "pi3"), as CloneAsBoard names clones: pristine Pis of
// the test's own, booted in seconds, for a test that would otherwise wait
// for the lab's own hosts while other tests hold them.
func FreshAsBoard(t testing.TB, kinds ...string) *inventory.Inventory {
	t.Helper()
	return asBoards(t, Fresh(t, kinds...), kinds)
}

// asBoards writes inv again with each host named by its kind.
func asBoards(t testing.TB, inv *inventory.Inventory, kinds []string) *inventory.Inventory {
	t.Helper()
	var boards []lab.Board
	for i, h := range inv.Hosts {
		b, _ := lab.BoardNamed(h.Name)
		b.Name = kinds[i]
		boards = append(boards, b)
	}
	return writeInventory(t, boards)
}

// CloneAsBoard is Clone with each clone named in the test's inventory by
// its board ("pi4", "pi3"), as its user might name it: for a test that
// only runs pidb on it and reaches it at its address. The lab knows it by
// its numbered name; LabName gives that, for what takes a lab host's name
// (lab up --hosts, its cgroups), and Cut finds it by its address.
func CloneAsBoard(t testing.TB, kinds ...string) *inventory.Inventory {
	t.Helper()
	return asBoards(t, Clone(t, kinds...), kinds)
}

// LabName is the lab's name of the host at h's address (a clone's
// numbered name, whatever the test's inventory calls it).
func LabName(t testing.TB, h inventory.Host) string {
	t.Helper()
	for _, lh := range Inventory(t).Hosts {
		if lh.Address == h.Address {
			return lh.Name
		}
	}
	t.Fatalf("no lab host is up at %s (%s)", h.Address, h.Name)
	return ""
}

// Fresh is Clone from the pristine image: a Pi of each board named that
// nothing has touched, numbered, the test's own.
func Fresh(t testing.TB, kinds ...string) *inventory.Inventory {
	t.Helper()
	return own(t, kinds, false)
}

func own(t testing.TB, kinds []string, provisioned bool) *inventory.Inventory {
	t.Helper()
	return Reserve(t, kinds...).boot(provisioned)
}

// Reserved are numbered hosts a test holds and has not booted yet.
type Reserved struct {
	t       testing.TB
	kinds   []string
	names   []string
	release string // FreshOn's; "": the lab's default
}

// Reserve takes, for the test alone, a numbered host of each kind, as
// Clone and Fresh do, without booting them; its Clone or Fresh boots them.
// A long test calls it before t.Parallel: the parallel tests start
// together and race for the numbered hosts (14 of a board), and one that
// lost once waited 95 s for a Pi 4 while shorter tests held all 14. The
// hosts are taken in the test's sequential part, in milliseconds.
func Reserve(t testing.TB, kinds ...string) *Reserved {
	t.Helper()
	Inventory(t)
	l := Lab(t)
	r := &Reserved{t: t, kinds: kinds}
	for _, kind := range kinds {
		if _, ok := lab.BoardNamed(kind); !ok {
			t.Fatalf("no lab board %q", kind)
		}
		name, err := numbered(t, l, kind)
		if err != nil {
			t.Fatal(err)
		}
		r.names = append(r.names, name)
	}
	return r
}

// Clone boots the reserved hosts as Clone does: provisioned, from the
// snapshots.
func (r *Reserved) Clone() *inventory.Inventory {
	r.t.Helper()
	return r.boot(true)
}

// Fresh boots the reserved hosts as Fresh does: from the pristine image.
func (r *Reserved) Fresh() *inventory.Inventory {
	r.t.Helper()
	return r.boot(false)
}

// FreshOn boots the reserved hosts as Fresh does, from the pristine image
// of release (lab.Releases: "trixie", "bookworm") instead of the lab's
// default, for t (a subtest of the test that reserved them: its failures
// and its hosts' removal are t's).
func (r *Reserved) FreshOn(t testing.TB, release string) *inventory.Inventory {
	t.Helper()
	r.t, r.release = t, release
	return r.boot(false)
}

func (r *Reserved) boot(provisioned bool) *inventory.Inventory {
	t := r.t
	t.Helper()
	l := atFullSpeed(Lab(t), r.names)
	if r.release != "" {
		l.Releases = map[string]string{}
		for _, n := range r.names {
			l.Releases[n] = r.release
		}
	}
	ctx := context.Background()
	for i, name := range r.names {
		if err := l.Remove(ctx, []string{name}); err != nil { // what a killed test left
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := l.Remove(context.Background(), []string{name}); err != nil {
				t.Errorf("lab: remove %s: %v", name, err)
			}
		})
		if !provisioned {
			continue
		}
		snap := snapshotPrefix + r.kinds[i]
		made, err := ensureSnapshot(t, l, name, snap)
		if err != nil {
			t.Fatalf("clone %s: %v", r.kinds[i], err)
		}
		if made {
			continue // the host the snapshot was taken of is the clone
		}
		if _, err := l.UpFrom(ctx, []string{name}, snap); err != nil {
			t.Fatalf("clone %s from %s: %v", name, snap, err)
		}
	}
	if !provisioned {
		if _, err := l.Up(ctx, r.names); err != nil {
			t.Fatalf("lab up %v: %v", r.names, err)
		}
	}
	return InventoryOf(t, r.names...)
}

// readySnapshot is the name of the snapshot of a provisioned host of
// board kind, taken first (by a numbered host of the board, removed after)
// where no test has taken it yet.
func readySnapshot(t testing.TB, kind string) string {
	t.Helper()
	l := Lab(t)
	snap := snapshotPrefix + kind
	if snaps, err := l.Snapshots(); err == nil && slices.ContainsFunc(snaps, func(s lab.SnapshotInfo) bool { return s.Name == snap }) {
		return snap // as scripts/test.sh leaves the lab: no host of the board held for it
	}
	name, err := numbered(t, l, kind)
	if err != nil {
		t.Fatal(err)
	}
	made, err := ensureSnapshot(t, atFullSpeed(l, []string{name}), name, snap)
	if made {
		err = errors.Join(err, l.Remove(context.Background(), []string{name}))
	}
	if err != nil {
		t.Fatalf("snapshot %s: %v", snap, err)
	}
	return snap
}

// BoardFrom boots, for the test alone, a numbered host of board kind
// from the snapshot of a provisioned host of board from (a Pi 4 with the
// Pi 3's MariaDB: CloneAsBoard("pi3") on a board that has USB 3), and
// returns an inventory of it named by its board, as CloneAsBoard does.
func BoardFrom(t testing.TB, kind, from string) *inventory.Inventory {
	t.Helper()
	r := Reserve(t, kind)
	snap := readySnapshot(t, from)
	bootOwn(t, atFullSpeed(Lab(t), r.names), r.names, snap)
	return asBoards(t, InventoryOf(t, r.names...), []string{kind})
}

// numbered leases, for the test alone, the highest numbered host of kind
// that no other test holds, waiting while every one is held.
func numbered(t testing.TB, l *lab.Lab, kind string) (string, error) {
	t.Helper()
	began := time.Now()
	for said := false; ; said = true {
		for n := 14; n >= 1; n-- {
			name := kind + "-" + strconv.Itoa(n)
			if _, ok := lab.BoardNamed(name); !ok {
				return "", fmt.Errorf("no numbered lab host %s", name)
			}
			f, err := leaseFile(l, name)
			if err != nil {
				return "", err
			}
			ok, err := flock(f, true, false)
			if err != nil {
				f.Close()
				return "", err
			}
			if !ok {
				f.Close()
				continue
			}
			t.Cleanup(func() { f.Close() })
			loggedWait(t, began, name)
			return name, nil
		}
		if !said {
			t.Logf("waiting for a numbered %s host: other tests hold all 14", kind)
		}
		time.Sleep(time.Second)
	}
}

// ensureSnapshot makes the snapshot snap unless it is there, by booting
// host fresh, provisioning it with the lab's inventory and taking the
// snapshot of it; made says host is up as the snapshot's own. Tests that
// want the same snapshot wait for the one that makes it.
func ensureSnapshot(t testing.TB, l *lab.Lab, host, snap string) (made bool, err error) {
	t.Helper()
	f, err := leaseFile(l, snap)
	if err != nil {
		return false, err
	}
	defer f.Close() // the lock: others wait while this test takes it
	began := time.Now()
	if _, err := flock(f, true, true); err != nil {
		return false, err
	}
	loggedWait(t, began, "snapshot "+snap+", being taken by another test")
	snaps, err := l.Snapshots()
	if err != nil {
		return false, err
	}
	for _, s := range snaps {
		if s.Name == snap {
			return false, nil
		}
	}
	t.Logf("taking snapshot %s: a fresh %s, provisioned", snap, host)
	ctx := context.Background()
	if _, err := l.Up(ctx, []string{host}); err != nil {
		return false, err
	}
	inv := InventoryOf(t, host)
	bin, err := pidbBinary(t)
	if err != nil {
		return false, err
	}
	cmd := exec.Command(bin, "provision", "-i", inv.Path)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("provision %s for snapshot %s: %v\n%s", host, snap, err, out)
	}
	if err := l.Snapshot(ctx, host, snap); err != nil {
		return false, err
	}
	return true, nil
}

// Pidb is the pidb binary the lab's own processes run as (the lab's link,
// its simulator): $PIDB_BIN, or pidb built from this module into the
// test's folder; a Go test binary cannot be one.
func Pidb(t testing.TB) string {
	t.Helper()
	bin, err := pidbBinary(t)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// pidbBinary is $PIDB_BIN, or pidb built from this module into the test's
// folder.
func pidbBinary(t testing.TB) (string, error) {
	if p := os.Getenv("PIDB_BIN"); p != "" {
		return p, nil
	}
	out := filepath.Join(t.TempDir(), "pidb")
	cmd := exec.Command("go", "build", "-o", out, "pidb/cmd/pidb")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build pidb: %v\n%s", err, b)
	}
	return out, nil
}

// atFullSpeed has the lab boot the named hosts at this machine's full
// speed: the tests check what pidb does, not how fast a board does it,
// and a Zero W at its board's speed would take minutes to provision
// (lab up --cpu).
func atFullSpeed(l *lab.Lab, names []string) *lab.Lab {
	l.CPU = map[string]string{}
	for _, n := range names {
		l.CPU[n] = lab.CPUFull
	}
	return l
}

// CardCopies boots the first reserved host fresh on release (as FreshOn
// does), hands prepare an inventory of it alone (to install and set it up
// as a user would), then boots the others from a copy of its card: Pis
// whose cards were cloned from one set up once, with its server's
// identity (MySQL's server_uuid, the certificate's address) on each. The
// copy is a snapshot of the test's own, removed after its hosts. It
// returns an inventory of all of them, the first first.
func (r *Reserved) CardCopies(t testing.TB, release string, prepare func(first *inventory.Inventory)) *inventory.Inventory {
	t.Helper()
	r.t = t
	l := atFullSpeed(Lab(t), r.names)
	l.Releases = map[string]string{r.names[0]: release}
	ctx := context.Background()
	if err := l.Remove(ctx, r.names); err != nil { // what a killed test left
		t.Fatal(err)
	}
	snap := snapshotPrefix + "copy-" + r.names[0]   // the host is the test's alone, so is the name
	if err := removeSnapshot(l, snap); err != nil { // what a killed test left
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the hosts' removal (cleanups run last first)
		if err := removeSnapshot(l, snap); err != nil {
			t.Errorf("lab: %v", err)
		}
	})
	t.Cleanup(func() {
		if err := l.Remove(context.Background(), r.names); err != nil {
			t.Errorf("lab: remove %v: %v", r.names, err)
		}
	})
	if _, err := l.Up(ctx, r.names[:1]); err != nil {
		t.Fatalf("lab up %s: %v", r.names[0], err)
	}
	prepare(InventoryOf(t, r.names[0]))
	if t.Failed() {
		t.FailNow()
	}
	if err := l.Snapshot(ctx, r.names[0], snap); err != nil {
		t.Fatalf("snapshot %s as %s: %v", r.names[0], snap, err)
	}
	if _, err := l.UpFrom(ctx, r.names[1:], snap); err != nil {
		t.Fatalf("lab up %v from %s: %v", r.names[1:], snap, err)
	}
	inv := InventoryOf(t, r.names...)
	for _, n := range r.names[1:] { // its units started (the server up), as Reboot waits
		MustSSH(t, RootHost(t, inv, n), "systemctl is-system-running --wait >/dev/null 2>&1; true")
	}
	return inv
}

// removeSnapshot removes the snapshot called name where there is one.
func removeSnapshot(l *lab.Lab, name string) error {
	snaps, err := l.Snapshots()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(snaps, func(s lab.SnapshotInfo) bool { return s.Name == name }) {
		return nil
	}
	return l.RemoveSnapshot(name)
}
