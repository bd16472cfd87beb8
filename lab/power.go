package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PowerCut pulls the running host's plug and powers it on again, as a Pi
// whose power lead is pulled loses what its kernel had not yet written to
// its card: what the host's programs had written and not fsync'd, and
// what its file systems' caches held.
//
// A lab host's card is a loop device over an image file, so what reached
// the card is what its image file holds; what the host's file systems held
// in the machine's page cache had not reached it. PowerCut freezes every
// process of the host (cgroup v1's freezer: none runs another
// instruction), copies the card's image file (and the drive's, if one is
// plugged in) as it is at that moment, kills the frozen processes, takes
// the card's file system and the host's root off the machine, and puts the
// copies in the images' place: what the page cache held, and the kernel
// would have written back later, is gone with the old files. The host then
// boots from the copies: ext4 replays its journal, and the host's systemd
// starts its services as after a pulled plug.
//
// Everything fsync'd before the cut is in the copy: an fsync returns when
// the loop device has taken the writes into the image file. Writes that
// had not been fsync'd may be in it or not, in any mix, as on a card
// whose controller writes in its own order. A host without a card of its
// own (its data on the machine's disk) cannot lose its page cache that
// way, and PowerCut refuses it.
func (l *Lab) PowerCut(ctx context.Context, name string) error {
	b, ok := BoardNamed(name)
	if !ok {
		return fmt.Errorf("no lab board %q", name)
	}
	unlock, err := l.lockHosts([]string{name})
	if err != nil {
		return err
	}
	defer unlock()
	if !l.powered(name) {
		return fmt.Errorf("%s is not up: lab up --hosts %s", name, name)
	}
	card := l.cardDev(name)
	if card == "" {
		return fmt.Errorf("%s has no card of its own (its disk is on this machine's, which a power cut of the host would not touch): take it down and up again on a machine where loop devices work", name)
	}
	group := machineName(name)
	freezer := cgroupDir("freezer", group)
	if len(pidsIn(freezer)) == 0 {
		return fmt.Errorf("%s was booted by an older lab, outside a freezer group: take it down and up again (lab down --hosts %s)", name, name)
	}
	images := []string{l.cardImage(name)}
	_, drive := l.drive(name)
	if drive != "" {
		images = append(images, l.driveImage(name))
	}

	// the cut: nothing of the host runs from here on
	l.logf("%s: the power is cut", name)
	if err := freeze(ctx, freezer, "FROZEN"); err != nil {
		_ = freeze(context.WithoutCancel(ctx), freezer, "THAWED")
		return fmt.Errorf("%s: freeze: %w", name, err)
	}
	var copyErr error
	for _, img := range images {
		if _, err := run(ctx, "cp", "--sparse=always", img, img+".cut"); err != nil {
			copyErr = errors.Join(copyErr, err)
		}
	}
	if copyErr != nil {
		// no cut after all: the host runs on as it was
		_ = freeze(context.WithoutCancel(ctx), freezer, "THAWED")
		for _, img := range images {
			_ = os.Remove(img + ".cut")
		}
		return fmt.Errorf("%s: copy its storage: %w", name, copyErr)
	}
	ctx = context.WithoutCancel(ctx) // half a power cut is worse than none
	if err := l.killFrozen(ctx, name); err != nil {
		return err
	}

	// what its kernel had not written is lost with the old images
	if err := unmount(ctx, l.rootfs(name)); err != nil {
		return err
	}
	if err := l.detachCard(ctx, name); err != nil {
		return err
	}
	if err := os.Rename(images[0]+".cut", images[0]); err != nil {
		return err
	}
	if drive != "" {
		// the drive keeps its loop device (the host's binds name it): the
		// copy is written back over its image, and the device's buffers
		// dropped
		if _, err := run(ctx, "cp", "--sparse=always", images[1]+".cut", images[1]); err != nil {
			return err
		}
		if err := os.Remove(images[1] + ".cut"); err != nil {
			return err
		}
		if _, err := run(ctx, "blockdev", "--flushbufs", drive); err != nil {
			return err
		}
	}

	// the power comes back
	lower := l.baseDir()
	if from, err := os.ReadFile(l.snapshotMark(name)); err == nil {
		lower = l.snapshotRoot(strings.TrimSpace(string(from)))
	}
	if _, err := l.mountDisk(ctx, name, lower); err != nil {
		return fmt.Errorf("%s: its disk after the cut: %w", name, err)
	}
	// the lab's own files in the host (its storage's kinds, vcgencmd) are
	// the lab's, not what the host wrote: as they were
	cfg, _ := l.readThermalConfig()
	if err := l.setStorage(b, cfg); err != nil {
		return err
	}
	if err := l.setVcgencmd(b, false); err != nil {
		return err
	}
	l.logf("%s: the power is back; booting", name)
	pid, err := l.startNspawn(b)
	if err != nil {
		return err
	}
	if err := l.waitForSSH(ctx, b, pid, 2*time.Minute); err != nil {
		return fmt.Errorf("%s after the power cut: %w", name, err)
	}
	l.logf("%s: up again after the power cut", name)
	return nil
}

// killFrozen kills every process of the frozen host, its supervisor first
// among them (it would boot the host again), and thaws the group, so that
// each dies before it runs another instruction; then it waits until none
// is left, and removes the groups the host's systemd made under its own
// (the host's own groups stay, with their limits).
func (l *Lab) killFrozen(ctx context.Context, name string) error {
	group := machineName(name)
	freezer := cgroupDir("freezer", group)
	pids := pidsIn(freezer)
	if sup := l.supervisor(name); sup > 0 && !slices.Contains(pids, sup) {
		_ = kill(sup)
	}
	for _, pid := range pids {
		_ = kill(pid)
	}
	if err := freeze(ctx, freezer, "THAWED"); err != nil {
		return fmt.Errorf("%s: thaw: %w", name, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := pidsIn(freezer)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: processes %v did not die", name, left)
		}
		for _, pid := range left {
			_ = kill(pid)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	for _, h := range cgroupHierarchies {
		top := cgroupDir(h, group)
		entries, err := os.ReadDir(top)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() {
				if err := removeCgroup(ctx, filepath.Join(top, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
