package provision

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/engine"
	"pidb/remote"
)

// datadirStep moves the database's data directory to the drive the
// inventory names (data_device): a USB SSD or an NVMe drive, which a
// database on a Pi wants before anything else, off its SD card. It makes
// an ext4 filesystem labelled pidb-data on the whole drive (only on a blank
// drive, one that holds pidb's own, or with data_device_wipe), mounts it
// at /srv/pidb-data by UUID with noatime through an fstab line with
// nofail, has systemd start the server only once that is mounted
// (RequiresMountsFor), and moves the data: a script on the host stops the
// server, copies the directory as the server's own user, verifies the
// copy, and only when pidb, still connected, says go, points the server at
// the copy and starts it; it removes the old directory once the server
// runs on the new one. A failure at any point, or no go from pidb (the
// link cut), puts the server back on its old directory, running.
type datadirStep struct{}

func (datadirStep) Name() string { return "datadir" }

// Where the drive goes, and how pidb knows its own filesystem.
const (
	dataMount = "/srv/pidb-data"
	dataLabel = "pidb-data"
	moveDir   = "/var/lib/pidb/datadir" // the move's script and state: root's own
	moveUnit  = "pidb-datadir-move"
	// goWait is how long the move's script waits, the copy verified and
	// the server stopped, for pidb to say go; without it, it puts the
	// server back on its old directory
	goWait = 30 * time.Second
	// readyWait is how long the script waits, the server started on its
	// new directory, for it to take connections
	readyWait = 2 * time.Minute
)

// disk is a whole disk the host has (a USB or NVMe drive), as its probe
// saw it.
type disk struct {
	Path   string            // /dev/sda
	Names  []string          // its stable names: /dev/disk/by-id/usb-..., /dev/disk/by-path/...
	Probe  map[string]string // blkid -p's: TYPE, LABEL, UUID, PTTYPE
	Mounts []string          // "DEVICE=MOUNTPOINT" of it and its partitions
}

// ours says the disk holds pidb's filesystem.
func (d disk) ours() bool { return d.Probe["TYPE"] == "ext4" && d.Probe["LABEL"] == dataLabel }

// blank says nothing is written on the disk that blkid knows.
func (d disk) blank() bool { return d.Probe["TYPE"] == "" && d.Probe["PTTYPE"] == "" }

// holds says what is on the disk, for an error.
func (d disk) holds() string {
	var parts []string
	if t := d.Probe["PTTYPE"]; t != "" {
		parts = append(parts, "a "+t+" partition table")
	}
	if t := d.Probe["TYPE"]; t != "" {
		fs := "a " + t + " filesystem"
		if l := d.Probe["LABEL"]; l != "" {
			fs += " labelled " + l
		}
		parts = append(parts, fs)
	}
	return strings.Join(parts, " and ")
}

// probeScript lists, as root, the root filesystem's device, each whole USB
// and NVMe disk with its stable names (udev's links to it in
// /dev/disk/by-id and by-path), what blkid finds on it and where it and
// its partitions are mounted, and what is mounted at dataMount.
const probeScript = `echo "root $(findmnt -n -o SOURCE / 2>/dev/null)"
for d in /dev/sd[a-z] /dev/sd[a-z][a-z] /dev/nvme[0-9]n[0-9] /dev/nvme[0-9][0-9]n[0-9]; do
	[ -b "$d" ] || continue
	echo "disk $d"
	for l in /dev/disk/by-id/* /dev/disk/by-path/*; do
		[ -L "$l" ] && [ "$(readlink -f -- "$l")" = "$d" ] && printf 'name %s
' "$l"
	done
	blkid -p -o export "$d" 2>/dev/null | sed -n 's/^\(TYPE\|LABEL\|UUID\|PTTYPE\)=/probe \1=/p'
	awk -v d="$d" 'index($1, d) == 1 { print "mount " $1 "=" $2 }' /proc/mounts
done
echo "at $(findmnt -n -o SOURCE,OPTIONS ` + dataMount + ` 2>/dev/null)"
PATH=$PATH:/usr/sbin:/sbin command -v mkfs.ext4 >/dev/null || echo "nomkfs"
true`

// probe is what probeScript saw.
type probe struct {
	root  string // the root filesystem's device
	disks []disk
	at    string // "SOURCE OPTIONS" mounted at dataMount; "" for none
	// noMkfs: mkfs.ext4 is not installed (e2fsprogs is not in a minimal
	// Debian 13, where it is no longer a required package)
	noMkfs bool
}

// installMkfs installs e2fsprogs, which has mkfs.ext4, as the install
// step installs the server: waiting for another apt's lock.
const installMkfs = "DEBIAN_FRONTEND=noninteractive apt-get -q install -y e2fsprogs"

func parseProbe(out string) probe {
	var p probe
	for _, line := range strings.Split(out, "\n") {
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch kind {
		case "root":
			p.root = rest
		case "disk":
			p.disks = append(p.disks, disk{Path: rest, Probe: map[string]string{}})
		case "name":
			if len(p.disks) > 0 {
				d := &p.disks[len(p.disks)-1]
				d.Names = append(d.Names, rest)
			}
		case "probe":
			if k, v, ok := strings.Cut(rest, "="); ok && len(p.disks) > 0 {
				p.disks[len(p.disks)-1].Probe[k] = v
			}
		case "mount":
			if len(p.disks) > 0 {
				d := &p.disks[len(p.disks)-1]
				d.Mounts = append(d.Mounts, rest)
			}
		case "at":
			p.at = rest
		case "nomkfs":
			p.noMkfs = true
		}
	}
	return p
}

// partition is a partition's device and its disk's: /dev/sda2 on
// /dev/sda, /dev/nvme0n1p2 on /dev/nvme0n1, /dev/mmcblk0p2 on /dev/mmcblk0.
var partition = regexp.MustCompile(`^(/dev/sd[a-z]+)[0-9]+$|^(/dev/(?:nvme[0-9]+n[0-9]+|mmcblk[0-9]+))p[0-9]+$`)

// diskOf is the whole disk a device is on.
func diskOf(dev string) string {
	if m := partition.FindStringSubmatch(dev); m != nil {
		return m[1] + m[2]
	}
	return dev
}

// pick chooses the drive the inventory names (want: a disk, or "auto")
// among what the probe saw, and refuses one that is the root's, is in use
// elsewhere, or holds something pidb may not erase (wipe: it may).
func (p probe) pick(want string, wipe bool) (disk, error) {
	rootDisk := diskOf(p.root)
	var names []string
	for _, d := range p.disks {
		names = append(names, d.Path)
	}
	elsewhere := func(d disk) []string {
		var out []string
		for _, m := range d.Mounts {
			if _, at, _ := strings.Cut(m, "="); at != dataMount {
				out = append(out, m)
			}
		}
		return out
	}
	var d disk
	if want == "auto" {
		found := false
		for _, c := range p.disks {
			if c.Path != rootDisk && len(elsewhere(c)) == 0 {
				d, found = c, true
				break
			}
		}
		if !found {
			have := "none"
			if len(names) > 0 {
				have = strings.Join(names, ", ") + ", each the root's or in use"
			}
			return d, fmt.Errorf("data_device = \"auto\": no USB or NVMe disk here without a mounted filesystem (the host has %s): plug the drive in, or name it", have)
		}
	} else {
		i := slices.IndexFunc(p.disks, func(c disk) bool { return c.Path == want || slices.Contains(c.Names, want) })
		if i < 0 {
			have := "no USB or NVMe disk"
			if len(names) > 0 {
				have = strings.Join(names, ", ")
			}
			return d, fmt.Errorf("data_device %s is not there (the host has %s): is the drive plugged in?", want, have)
		}
		d = p.disks[i]
	}
	switch {
	case d.Path == rootDisk:
		return d, fmt.Errorf("data_device %s holds the root filesystem (%s): the data goes to another drive", d.Path, p.root)
	case len(elsewhere(d)) > 0:
		return d, fmt.Errorf("data_device %s is in use: %s is mounted; pidb takes a drive nothing else uses", d.Path, strings.Join(elsewhere(d), ", "))
	case d.ours() || d.blank() || wipe:
		return d, nil
	}
	return d, fmt.Errorf("data_device %s holds %s: pidb erases a drive only with data_device_wipe = true on the host", d.Path, d.holds())
}

// dataDirOn is where the engine's data directory goes on the drive.
func dataDirOn(e engine.Engine) string {
	if e.Flavor == dbms.Postgres {
		return path.Join(dataMount, "postgresql", e.Major, "main")
	}
	return path.Join(dataMount, "mysql", "data")
}

// serverUser is the system user the server runs as, who owns its data.
func serverUser(e engine.Engine) string {
	if e.Flavor == dbms.Postgres {
		return "postgres"
	}
	return "mysql"
}

// mountDropIn has systemd start the server only once the drive is mounted:
// never on an empty mount point.
func mountDropIn(e engine.Engine) (file, content string) {
	return "/etc/systemd/system/" + e.Service + ".service.d/50-pidb-datadir.conf",
		"# Managed by pidb: the data directory is on the drive mounted here (data_device).\n[Unit]\nRequiresMountsFor=" + dataMount + "\n"
}

// fstabLine mounts the filesystem of uuid at dataMount: noatime (no write
// for a read), nofail (a Pi whose drive is gone still boots, and
// RequiresMountsFor keeps the server down).
func fstabLine(uuid string) string {
	return "UUID=" + uuid + " " + dataMount + " ext4 noatime,nofail 0 2"
}

// withFstabLine is fstab with line as the one entry for dataMount.
func withFstabLine(fstab, line string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(fstab, "\n"), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && !strings.HasPrefix(f[0], "#") && f[1] == dataMount {
			continue
		}
		if l == "# pidb: the database's data (data_device)" {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimLeft(strings.Join(out, "\n")+"\n# pidb: the database's data (data_device)\n"+line+"\n", "\n")
}

// pointedFile is the server's configuration file that names its data
// directory: PostgreSQL's postgresql.conf (its data_directory line), or
// MySQL's and MariaDB's drop-in of pidb's own (datadir).
func pointedFile(e engine.Engine) string {
	switch e.Flavor {
	case dbms.Postgres:
		return "/etc/postgresql/" + e.Major + "/main/postgresql.conf"
	case dbms.MySQL:
		return "/etc/mysql/mysql.conf.d/60-pidb-datadir.cnf"
	}
	return "/etc/mysql/mariadb.conf.d/60-pidb-datadir.cnf"
}

// pointed is pointedFile's content, conf now, with dir named there.
func pointed(e engine.Engine, conf, dir string) (string, error) {
	if e.Flavor != dbms.Postgres {
		return "# Managed by pidb: the data directory, on the drive data_device names.\n[mysqld]\ndatadir = " + dir + "\n", nil
	}
	line := regexp.MustCompile(`(?m)^[ \t]*data_directory[ \t]*=.*$`)
	if !line.MatchString(conf) {
		return "", fmt.Errorf("%s has no data_directory line to point at %s", pointedFile(e), dir)
	}
	done := false
	return line.ReplaceAllStringFunc(conf, func(string) string {
		if done {
			return "#" // a second one would win: PostgreSQL takes the last
		}
		done = true
		return "data_directory = '" + dir + "'\t\t# moved by pidb (data_device)"
	}), nil
}

// whereCmd prints the data directory the running server says it uses.
func whereCmd(e engine.Engine) string {
	if e.Flavor == dbms.Postgres {
		return e.Client("SHOW data_directory")
	}
	return e.Client("SELECT @@datadir")
}

// moveScript is the script that moves the data from old to dir, run on
// the host by systemd (so that a cut link does not cut it), writing its
// state to moveDir/state: stopping, copying, verified (waiting for go),
// switching, removing, done; or "failed: WHY" with the server back on
// old. Every file of the data is read and written as the server's own user
// (dir's folder is that user's), never root: root acts on no path that
// user could have planted a link at.
//
// Its text depends on the engine alone. The paths are its positional
// parameters (moveArgs): old comes from the host (pg_lsclusters reads it
// from a file the postgres user writes), so no path is ever part of a
// script's text, in a message or a comment either. With the copy verified,
// it waits for go at most wait (goWait), by the clock.
func moveScript(e engine.Engine, wait time.Duration) string {
	// sh runs cmd with the script's variables vars as its positional
	// parameters ($1, $2...); as, the same as the server's user
	sh := func(cmd string, vars ...string) string {
		args := ""
		for _, v := range vars {
			args += ` "$` + v + `"`
		}
		return "sh -c " + remote.Quote(cmd) + " sh" + args
	}
	as := func(cmd string, vars ...string) string {
		return "runuser -u " + serverUser(e) + " -- " + sh(cmd, vars...)
	}
	// what must be the same in the copy: each file's contents, and each
	// entry's name, mode, type, size (a file's) and target (a link's)
	sums := `cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum; find . \( -type f -printf '%p %m f %s\n' \) -o \( ! -type f -printf '%p %m %y %l\n' \) | sort`
	confOps := sh // root's folder (MySQL's conf.d)
	if e.Flavor == dbms.Postgres {
		confOps = as // postgres's folder
	}
	s := &strings.Builder{}
	w := func(format string, args ...any) { fmt.Fprintf(s, format+"\n", args...) }
	w("#!/bin/sh")
	w("# pidb: moves %s's data from the directory in $1 to the one in $2 (data_device),", e.Flavor)
	w("# pointing the server at it by moving the file $4 over $3; its state in the folder $5")
	w("set -u")
	w(`old=$1 dir=$2 conf=$3 confnew=$4 S=$5`)
	w(`tmp=$dir.pidb-copy before=$conf.pidb-before-move`)
	w(`state() { printf '%%s\n' "$1" > "$S/state.new" && mv "$S/state.new" "$S/state"; }`)
	w(`now() { read -r up _ < /proc/uptime; echo "${up%%.*}"; }`)
	w(`switched=no`)
	w(`fail() {`)
	w(`	state "putting back: $1"`)
	w(`	systemctl stop %s`, remote.Quote(e.Service))
	w(`	if [ "$switched" = yes ]; then %s; fi`, confOps(`mv -f "$1" "$2" 2>/dev/null || rm -f "$2"`, "before", "conf"))
	w(`	%s`, as(`rm -rf "$1" "$2"`, "dir", "tmp"))
	w(`	%s`, e.StartCmd())
	w(`	state "failed: $1"`)
	w(`	exit 1`)
	w(`}`)
	w(`state stopping`)
	w(`systemctl stop %s || fail "systemctl stop %s failed"`, remote.Quote(e.Service), e.Service)
	w(`state copying`)
	w(`%s || fail "the copy of $old failed"`, as(`rm -rf "$2" && mkdir -m 0700 "$2" && cp -a "$1"/. "$2"/`, "old", "tmp"))
	w(`a=$(%s) || fail "could not read $old"`, as(sums, "old"))
	w(`b=$(%s) || fail "could not read the copy"`, as(sums, "tmp"))
	w(`[ "$a" = "$b" ] || fail "the copy differs from $old"`)
	w(`%s || fail "could not put the copy at $dir"`, as(`chmod --reference="$1" "$2" && rm -rf "$3" && mv "$2" "$3"`, "old", "tmp", "dir"))
	w(`state verified`)
	// the waits are measured by the clock (the seconds since boot), not
	// by counting rounds: on a starved host, a round of sleep 0.1 takes
	// far longer than that
	w(`end=$(($(now) + %d)); while [ ! -e "$S/go" ]; do [ "$(now)" -lt "$end" ] || fail "no go from pidb within %s (its link to the host was cut?)"; sleep 0.1; done`, int(wait.Seconds()), wait)
	w(`state switching`)
	if e.Flavor == dbms.Postgres {
		w(`%s || fail "could not keep $conf"`, confOps(`cp -p "$1" "$2"`, "conf", "before"))
	}
	w(`switched=yes`)
	w(`%s || fail "could not point the server at $dir"`, confOps(`mv -f "$1" "$2"`, "confnew", "conf"))
	w(`%s || fail "%s did not start on $dir"`, e.StartCmd(), e.Service)
	w(`end=$(($(now) + %d)); until %s; do [ "$(now)" -lt "$end" ] || fail "%s started on $dir and takes no connections"; sleep 0.1; done`, int(readyWait.Seconds()), e.ReadyCmd(), e.Service)
	w(`at=$(%s) || fail "could not ask %s where its data is"`, whereCmd(e), e.Service)
	w(`[ "${at%%/}" = "$dir" ] || fail "%s runs on $at, not $dir"`, e.Service)
	w(`state removing`)
	if e.Flavor == dbms.Postgres {
		w(`%s`, confOps(`rm -f "$1"`, "before"))
	}
	w(`%s; rmdir -- "$old" 2>/dev/null`, as(`find "$1" -mindepth 1 -delete`, "old"))
	w(`state done`)
	return s.String()
}

// moveArgs are moveScript's positional parameters, in its order: the
// state's folder last (moveDir).
func moveArgs(old, dir, conf, confNew, state string) []string {
	return []string{old, dir, conf, confNew, state}
}

// systemdArgs are a command's words as systemd-run passes them on
// unchanged: the service manager expands $NAME and ${NAME} in a service's
// command line, and takes $$ for a dollar sign.
func systemdArgs(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = strings.ReplaceAll(w, "$", "$$")
	}
	return out
}

// probeHost runs probeScript on the host.
func probeHost(ctx context.Context, t *Target) (probe, error) {
	out, err := t.run(ctx, probeScript)
	if err != nil {
		return probe{}, err
	}
	return parseProbe(out), nil
}

func (datadirStep) Check(ctx context.Context, t *Target) (Change, error) {
	if t.Host.DataDevice == "" {
		return Change{}, nil
	}
	if err := waitForMove(ctx, t); err != nil {
		return Change{}, err
	}
	p, err := probeHost(ctx, t)
	if err != nil {
		return Change{}, err
	}
	d, err := p.pick(t.Host.DataDevice, t.Host.DataDeviceWipe)
	if err != nil {
		return Change{}, err
	}
	var cmds []string
	if !d.ours() {
		if p.noMkfs {
			cmds = append(cmds, strings.TrimPrefix(installMkfs, "DEBIAN_FRONTEND=noninteractive ")+"   # mkfs.ext4 is not installed")
		}
		if !d.blank() {
			cmds = append(cmds, "wipefs -a "+d.Path+"   # it holds "+d.holds())
		}
		cmds = append(cmds, "mkfs.ext4 -L "+dataLabel+" "+d.Path)
	}
	uuid := d.Probe["UUID"]
	if !d.ours() {
		uuid = "(the new filesystem's)"
	}
	fstab, err := t.Root.ReadFile(ctx, "/etc/fstab")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if !d.ours() || withFstabLine(string(fstab), fstabLine(uuid)) != string(fstab) {
		cmds = append(cmds, "/etc/fstab: "+fstabLine(uuid))
	}
	if src, opts, _ := strings.Cut(p.at, " "); src != d.Path || !slices.Contains(strings.Split(opts, ","), "noatime") {
		cmds = append(cmds, "mount "+dataMount)
	}
	e, err := engine.Of(t.Facts)
	if err != nil {
		cmds = append(cmds, "after the install: move the data directory to "+dataMount)
		return Change{Needed: true, Commands: cmds, Note: "the data goes to " + d.Path}, nil
	}
	file, want := mountDropIn(e)
	have, err := t.Root.ReadFile(ctx, file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Change{}, err
	}
	if string(have) != want {
		cmds = append(cmds, file+": RequiresMountsFor="+dataMount, "systemctl daemon-reload")
	}
	dir := dataDirOn(e)
	if t.Facts.DataDir != dir {
		cmds = append(cmds, fmt.Sprintf("systemctl stop %s; copy %s to %s as %s and verify it; point the server at it; systemctl start %s; remove %s",
			e.Service, t.Facts.DataDir, dir, serverUser(e), e.Service, t.Facts.DataDir))
	}
	if len(cmds) == 0 {
		return Change{}, nil
	}
	return Change{Needed: true, Commands: cmds, Note: fmt.Sprintf("the data directory goes to %s on %s (%s); %s is down while it is copied", dir, d.Path, dataMount, e.Flavor)}, nil
}

func (datadirStep) Apply(ctx context.Context, t *Target) error {
	p, err := probeHost(ctx, t)
	if err != nil {
		return err
	}
	d, err := p.pick(t.Host.DataDevice, t.Host.DataDeviceWipe)
	if err != nil {
		return err
	}
	dev := remote.Quote(d.Path)
	if !d.ours() && p.noMkfs {
		t.Step("datadir: installing e2fsprogs (mkfs.ext4 is not installed)")
		if out, err := t.retryLock(ctx, installMkfs); err != nil {
			return fmt.Errorf("install e2fsprogs for mkfs.ext4: %w", aptHint(err, out))
		}
	}
	if !d.ours() {
		t.Step("datadir: making the filesystem on " + d.Path)
		if _, err := t.run(ctx, "wipefs -a "+dev+" >/dev/null && mkfs.ext4 -q -F -L "+dataLabel+" "+dev); err != nil {
			return fmt.Errorf("make the filesystem on %s: %w", d.Path, err)
		}
	}
	// udev on a Pi names the new filesystem; blkid reads it either way
	out, err := t.run(ctx, "udevadm settle 2>/dev/null; blkid -p -s UUID -o value "+dev+" && blkid "+dev+" >/dev/null")
	uuid := strings.TrimSpace(out)
	if err != nil || !regexp.MustCompile(`^[0-9a-fA-F-]{8,36}$`).MatchString(uuid) {
		return fmt.Errorf("the UUID of %s's filesystem: %q %v", d.Path, uuid, err)
	}
	fstab, err := t.Root.ReadFile(ctx, "/etc/fstab")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if want := withFstabLine(string(fstab), fstabLine(uuid)); want != string(fstab) {
		if err := t.Root.Upload(ctx, "/etc/fstab", []byte(want), 0o644); err != nil {
			return err
		}
	}
	mnt := remote.Quote(dataMount)
	if _, err := t.run(ctx, "mkdir -p "+mnt+" && if mountpoint -q "+mnt+"; then mount -o remount,noatime "+mnt+"; else mount "+mnt+"; fi && chmod 0755 "+mnt); err != nil {
		return fmt.Errorf("mount %s at %s: %w", d.Path, dataMount, err)
	}
	if at, err := t.run(ctx, "findmnt -n -o SOURCE,OPTIONS "+mnt); err != nil || !strings.HasPrefix(at, d.Path+" ") || !strings.Contains(at, "noatime") {
		return fmt.Errorf("%s is not mounted at %s with noatime: %q %v", d.Path, dataMount, strings.TrimSpace(at), err)
	}
	e, err := engine.Of(t.Facts)
	if err != nil {
		return err
	}
	file, want := mountDropIn(e)
	if _, err := t.run(ctx, "mkdir -p "+remote.Quote(path.Dir(file))); err != nil {
		return err
	}
	if err := t.Root.Upload(ctx, file, []byte(want), 0o644); err != nil {
		return err
	}
	if _, err := t.run(ctx, "systemctl daemon-reload"); err != nil {
		return err
	}
	if err := allowInAppArmor(ctx, t, e); err != nil {
		return err
	}
	dir := dataDirOn(e)
	if t.Facts.DataDir == dir {
		return t.refresh(ctx)
	}
	if err := move(ctx, t, e, t.Facts.DataDir, dir); err != nil {
		return err
	}
	return t.refresh(ctx)
}

// allowInAppArmor lets the server's AppArmor profile, where the
// distribution has one (Ubuntu's MySQL), use the new data directory.
func allowInAppArmor(ctx context.Context, t *Target, e engine.Engine) error {
	if e.Flavor == dbms.Postgres {
		return nil
	}
	profile := "/etc/apparmor.d/usr.sbin." + e.Daemon()
	if _, err := t.Root.ReadFile(ctx, profile); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	local := path.Join(path.Dir(profile), "local", path.Base(profile))
	want := "# Managed by pidb: the data directory on the drive (data_device)\n" + dataDirOn(e) + "/ r,\n" + dataDirOn(e) + "/** rwk,\n"
	have, err := t.Root.ReadFile(ctx, local)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if strings.Contains(string(have), want) {
		return nil
	}
	if _, err := t.run(ctx, "mkdir -p "+remote.Quote(path.Dir(local))); err != nil {
		return err
	}
	if err := t.Root.Upload(ctx, local, append(have, []byte(want)...), 0o644); err != nil {
		return err
	}
	// loaded again where AppArmor is on and the profile is not disabled
	disabled := path.Join(path.Dir(profile), "disable", path.Base(profile))
	_, err = t.run(ctx, `if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] && command -v apparmor_parser >/dev/null && [ ! -e `+
		remote.Quote(disabled)+` ]; then apparmor_parser -r `+remote.Quote(profile)+`; fi`)
	return err
}

// move has the host move the data directory from old to dir (moveScript,
// as a transient systemd service) and says go once the copy is verified.
func move(ctx context.Context, t *Target, e engine.Engine, old, dir string) error {
	if old == "" {
		return fmt.Errorf("where %s keeps its data is not known: is it installed?", e.Flavor)
	}
	file := pointedFile(e)
	conf, err := t.Root.ReadFile(ctx, file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	content, err := pointed(e, string(conf), dir)
	if err != nil {
		return err
	}
	confNew := path.Join(path.Dir(file), "."+path.Base(file)+".pidb-new")
	if err := t.Root.Upload(ctx, confNew, []byte(content), 0o644); err != nil {
		return err
	}
	parent := path.Dir(dir)
	if _, err := t.run(ctx, "install -d -m 0755 -o root -g root "+remote.Quote(moveDir)+" && chmod 0700 "+remote.Quote(moveDir)+
		" && rm -f "+remote.Quote(moveDir+"/go")+" "+remote.Quote(moveDir+"/state")+
		" && mkdir -p "+remote.Quote(parent)+" && chown "+serverUser(e)+": "+remote.Quote(parent)); err != nil {
		return err
	}
	script := moveDir + "/move.sh"
	if err := t.Root.Upload(ctx, script, []byte(moveScript(e, goWait)), 0o700); err != nil {
		return err
	}
	t.Step(fmt.Sprintf("datadir: moving %s to %s (%s is down meanwhile)", old, dir, e.Flavor))
	if _, err := t.run(ctx, "systemctl reset-failed "+moveUnit+" 2>/dev/null; systemd-run --quiet --collect --unit="+moveUnit+" "+
		remote.Command(systemdArgs(append([]string{"/bin/sh", script}, moveArgs(old, dir, file, confNew, moveDir)...))...)); err != nil {
		return err
	}
	said := ""
	for polls := 0; ; polls++ {
		state, running, err := moveState(ctx, t)
		if err != nil {
			return fmt.Errorf("while the host moves the data: %w (without pidb's go it puts %s back on %s)", err, e.Flavor, old)
		}
		switch {
		case state == "done":
			return nil
		case strings.HasPrefix(state, "failed: "):
			return fmt.Errorf("the move of the data to %s failed: %s; %s runs on %s as before", dir, strings.TrimPrefix(state, "failed: "), e.Flavor, old)
		case !running && (state != "" || polls > 25):
			return fmt.Errorf("the move of the data to %s ended at %q without a word (journalctl -u %s on the host)", dir, state, moveUnit)
		case state == "verified":
			if _, err := t.run(ctx, "touch "+remote.Quote(moveDir+"/go")); err != nil {
				return err
			}
		case state != said && state != "":
			t.Step("datadir: " + state)
		}
		said = state
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// moveState is the move's state on the host, and whether its service
// still runs: asked first, so that the state read after a service that
// has ended is its last.
func moveState(ctx context.Context, t *Target) (state string, running bool, err error) {
	out, err := t.run(ctx, "a=$(systemctl is-active "+moveUnit+" 2>/dev/null); printf '%s|%s' \"$(cat "+remote.Quote(moveDir+"/state")+" 2>/dev/null)\" \"$a\"")
	if err != nil {
		return "", false, err
	}
	state, active, _ := strings.Cut(out, "|")
	active = strings.TrimSpace(active)
	return strings.TrimSpace(state), active == "active" || active == "activating", nil
}

// waitForMove waits for a move an earlier run began (and a cut link left
// running on the host) to end, either way.
func waitForMove(ctx context.Context, t *Target) error {
	for i := 0; ; i++ {
		out, err := t.run(ctx, "systemctl is-active "+moveUnit+" 2>/dev/null || true")
		if err != nil {
			return err
		}
		if s := strings.TrimSpace(out); s != "active" && s != "activating" {
			if i > 0 {
				return t.refresh(ctx)
			}
			return nil
		}
		if i == 0 {
			t.Step("datadir: waiting for the move an earlier run began")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
