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
// the same one again) from it. A provisioned Pi copied this way comes back
// provisioned without apt doing it again, as a card image written to a
// rack of Pis does.

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

// SnapshotInfo describes a snapshot for `lab snapshot --list`.
type SnapshotInfo struct {
	Name  string    `json:"name"`
	From  string    `json:"from"`  // the host it was taken of
	Model string    `json:"model"` // that host's board
	Taken time.Time `json:"taken"`
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
	info := fmt.Sprintf("from=%s\nmodel=%s\ntaken=%s\n", host, b.Model, time.Now().UTC().Format(time.RFC3339))
	if err := writeFile(filepath.Join(tmp, "snapshot"), info, 0o644); err != nil {
		return err
	}
	unlock, err := l.lock() // two snapshots of one name never renamed at once
	if err != nil {
		return err
	}
	defer unlock()
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
		data, err := os.ReadFile(filepath.Join(l.snapshotsDir(), d.Name(), "snapshot"))
		if err != nil || !d.IsDir() {
			continue // one being taken, or not a snapshot
		}
		s := SnapshotInfo{Name: d.Name()}
		for _, line := range strings.Split(string(data), "\n") {
			k, v, _ := strings.Cut(line, "=")
			switch k {
			case "from":
				s.From = v
			case "model":
				s.Model = v
			case "taken":
				s.Taken, _ = time.Parse(time.RFC3339, v)
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RemoveSnapshot deletes the snapshot called name.
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
	return os.RemoveAll(dir)
}
