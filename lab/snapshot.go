package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// A snapshot is a copy of one host's disk, taken while the host is held
// still, kept in the lab's snapshots folder: UpFrom boots other hosts (or
// the same one again) from it, each with a layer of its own over it. A
// provisioned Pi copied this way comes back provisioned without apt doing
// it again, as a card image written to a rack of Pis does.

func (l *Lab) snapshotsDir() string { return filepath.Join(l.Dir, "snapshots") }

func (l *Lab) snapshotRoot(name string) string {
	return filepath.Join(l.snapshotsDir(), name, "rootfs")
}

var snapshotName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

func checkSnapshotName(name string) error {
	if !snapshotName.MatchString(name) {
		return fmt.Errorf("snapshot name %q: want lower-case letters, digits, '.', '_' and '-', at most 63", name)
	}
	return nil
}

// snapshotMark is the file in a host's folder that names the snapshot
// under its disk. prepareUp writes it, under the lab's lock, before the
// host boots, and it goes with the host's folder, so a snapshot with a
// mark on it is never replaced or removed under a host (see
// snapshotUsers).
func (l *Lab) snapshotMark(host string) string { return filepath.Join(l.hostDir(host), "snapshot") }

// snapshotUsers are the hosts whose disk lies over the snapshot called
// name. Read under the lab's lock.
func (l *Lab) snapshotUsers(name string) []string {
	marks, _ := filepath.Glob(l.snapshotMark("*"))
	var users []string
	for _, m := range marks {
		if data, err := os.ReadFile(m); err == nil && strings.TrimSpace(string(data)) == name {
			users = append(users, filepath.Base(filepath.Dir(m)))
		}
	}
	sort.Strings(users)
	return users
}

// inUse is the error for a snapshot that hosts' disks lie over.
func inUse(name string, users []string) error {
	return fmt.Errorf("snapshot %s is the disk under %s: take them down first (lab down --hosts %s)", name, strings.Join(users, ", "), strings.Join(users, ","))
}

// mountDisk makes the host's disk lower (the base image, or a
// snapshot's disk), read-only, under an overlay whose upper layer takes
// the host's own writes: on its card (attachCard), which the host sees as
// its root's device (rootSource), or, where the machine gives no loop
// device, in the host's folder. A host comes up without a copy of lower
// (600 MB and seconds of a core for a provisioned Pi, for each host).
// lower must then stay as it is while the host lives: snapshotUsers and
// ensureBase guard it.
func (l *Lab) mountDisk(ctx context.Context, host, lower string) (card bool, err error) {
	disk, source := filepath.Join(l.hostDir(host), "disk"), Prefix+"-"+host
	if _, err := l.attachCard(ctx, host); err == nil {
		disk, source, card = l.cardDir(host), rootSource, true
	} else {
		l.logf("%s: no card of its own (its data on this machine's disk, unthrottled): %v", host, err)
	}
	upper, work, root := filepath.Join(disk, "upper"), filepath.Join(disk, "work"), l.rootfs(host)
	for _, p := range []string{lower, upper, work} {
		if strings.ContainsAny(p, ",:\\") {
			return false, fmt.Errorf("the path %s has a character overlayfs's options cannot carry", p)
		}
	}
	for _, d := range []string{upper, work, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return false, err
		}
	}
	_, err = run(ctx, "mount", "-t", "overlay", source, "-o", "lowerdir="+lower+",upperdir="+upper+",workdir="+work, root)
	if err != nil {
		_ = os.RemoveAll(filepath.Join(l.hostDir(host), "disk"))
		_ = os.Remove(root)
		if card {
			err = errors.Join(err, l.detachCard(ctx, host))
		}
	}
	return card, err
}

// unmount takes a host's layered disk off its root, if it is mounted
// there; lazily if something still holds it (a container on its way out).
func unmount(ctx context.Context, root string) error {
	if !mounted(root) {
		return nil
	}
	if _, err := run(ctx, "umount", root); err != nil {
		if _, err2 := run(ctx, "umount", "--lazy", root); err2 != nil {
			return err
		}
	}
	return nil
}

// mounted reports whether something is mounted at path in this process's
// mount namespace.
func mounted(path string) bool {
	for _, m := range mounts() {
		if m.point == path {
			return true
		}
	}
	return false
}

// mount is one line of /proc/self/mountinfo: where, its source and its
// file system's type.
type mount struct{ point, source, fstype string }

// mounts are this process's mount namespace's mounts.
func mounts() []mount {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var out []mount
	for _, line := range strings.Split(string(data), "\n") {
		_, after, _ := strings.Cut(line, " - ") // fstype, source, options
		f, fs := strings.Fields(line), strings.Fields(after)
		if len(f) > 4 {
			m := mount{point: f[4]}
			if len(fs) > 1 {
				m.fstype, m.source = fs[0], fs[1]
			}
			out = append(out, m)
		}
	}
	return out
}

// readKV reads a file of key=value lines.
func readKV(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	return kv, nil
}

// SnapshotInfo describes a snapshot for `lab snapshot --list`.
type SnapshotInfo struct {
	Name  string `json:"name"`
	From  string `json:"from"`  // the host it was taken of
	Model string `json:"model"` // that host's board
	// Release is that host's release (see Releases): bookworm for a
	// snapshot an older lab took, before it had releases
	Release string    `json:"release"`
	Taken   time.Time `json:"taken"`
}

// snapshotRelease is the release of the snapshot called name's host.
func (l *Lab) snapshotRelease(name string) string {
	kv, _ := readKV(filepath.Join(l.snapshotsDir(), name, "snapshot"))
	if r := kv["release"]; r != "" {
		return r
	}
	return legacyRelease
}

// Snapshot copies the disk of the running host into the snapshot called
// name (replacing one of that name). The host is frozen while its disk is
// copied (the cgroup freezer: every process in it stops where it is), so
// the copy is one moment of it, as a power cut would leave the card, only
// with every write that had returned; a database on it recovers as after
// a power cut. It then runs on as before. apt's caches are left out of the
// copy, as apt-get clean would leave them.
func (l *Lab) Snapshot(ctx context.Context, host, name string) error {
	if err := checkHost(); err != nil {
		return err
	}
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	b, ok := BoardNamed(host)
	if !ok {
		return fmt.Errorf("no lab host %q", host)
	}
	unlockHost, err := l.lockHosts([]string{host}) // no one removes it meanwhile
	if err != nil {
		return err
	}
	defer unlockHost()
	if !l.running(host) {
		return fmt.Errorf("%s is not up: a snapshot is taken of a running host", host)
	}
	freezer := cgroupDir("freezer", machineName(host))
	if len(pidsIn(freezer)) == 0 {
		return fmt.Errorf("%s was booted by an older lab, outside a freezer group: take it down and up again (lab down --hosts %s) before a snapshot", host, host)
	}
	dir := filepath.Join(l.snapshotsDir(), name)
	if users := l.snapshotUsers(name); len(users) > 0 { // before the copy; and again under the lock
		return inUse(name, users)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	l.logf("%s: freezing it to copy its disk into snapshot %s", host, name)
	if err := freeze(ctx, freezer, "FROZEN"); err != nil {
		_ = freeze(context.WithoutCancel(ctx), freezer, "THAWED")
		return fmt.Errorf("%s: freeze: %w", host, err)
	}
	_, cpErr := run(ctx, "cp", "-a", "--reflink=auto", l.rootfs(host), filepath.Join(tmp, "rootfs"))
	if err := freeze(context.WithoutCancel(ctx), freezer, "THAWED"); err != nil {
		return fmt.Errorf("%s: thaw: %w", host, err)
	}
	if cpErr != nil {
		_ = os.RemoveAll(tmp)
		return cpErr
	}
	// apt's caches stay out, as apt-get clean leaves a card before it is
	// imaged: the packages it downloaded and its binary caches, which apt
	// makes again (a fifth of a provisioned Pi's disk, copied again for
	// every host booted from it)
	junk, _ := filepath.Glob(filepath.Join(tmp, "rootfs/var/cache/apt/archives/*.deb"))
	bins, _ := filepath.Glob(filepath.Join(tmp, "rootfs/var/cache/apt/*.bin"))
	for _, p := range append(junk, bins...) {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	info := fmt.Sprintf("from=%s\nmodel=%s\nrelease=%s\ntaken=%s\n", host, b.Model, l.Release(host), time.Now().UTC().Format(time.RFC3339))
	if err := writeFile(filepath.Join(tmp, "snapshot"), info, 0o644); err != nil {
		return err
	}
	unlock, err := l.lock() // two snapshots of one name never renamed at once
	if err != nil {
		return err
	}
	defer unlock()
	if users := l.snapshotUsers(name); len(users) > 0 {
		_ = os.RemoveAll(tmp)
		return inUse(name, users)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	l.logf("%s: snapshot %s taken; it runs on", host, name)
	return nil
}

// freeze sets a freezer group's state and waits until it holds.
func freeze(ctx context.Context, group, state string) error {
	f := filepath.Join(group, "freezer.state")
	if err := os.WriteFile(f, []byte(state+"\n"), 0o644); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(data)) == state {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still %s after 30 s", strings.TrimSpace(string(data)))
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
		// a FREEZING group that a new task joined is asked again
		if state == "FROZEN" {
			if err := os.WriteFile(f, []byte(state+"\n"), 0o644); err != nil {
				return err
			}
		}
	}
}

// Snapshots lists the lab's snapshots by name.
func (l *Lab) Snapshots() ([]SnapshotInfo, error) {
	dirs, err := os.ReadDir(l.snapshotsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SnapshotInfo
	for _, d := range dirs {
		kv, err := readKV(filepath.Join(l.snapshotsDir(), d.Name(), "snapshot"))
		if err != nil || !d.IsDir() {
			continue // one being taken, or not a snapshot
		}
		s := SnapshotInfo{Name: d.Name(), From: kv["from"], Model: kv["model"], Release: l.snapshotRelease(d.Name())}
		s.Taken, _ = time.Parse(time.RFC3339, kv["taken"])
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveSnapshot deletes the snapshot called name, unless a host's disk
// lies over it.
func (l *Lab) RemoveSnapshot(name string) error {
	if err := checkSnapshotName(name); err != nil {
		return err
	}
	dir := filepath.Join(l.snapshotsDir(), name)
	if !fileExists(dir) {
		return fmt.Errorf("no snapshot %q in %s", name, l.snapshotsDir())
	}
	unlock, err := l.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if users := l.snapshotUsers(name); len(users) > 0 {
		return inUse(name, users)
	}
	return os.RemoveAll(dir)
}
