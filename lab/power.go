package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
// instruction), stops every write to the card's loop device (and a plugged
// drive's) with the block throttle, this machine's kernel's writeback and
// journal commits included, waits until the loop devices have written
// every write they had taken into their images (drainWrites), copies the
// images as they are, lets the writes go on (to the old images), kills
// the frozen processes, takes the card's file system and the host's root
// off the machine, and puts the copies in the images' place: what the page
// cache held, and the kernel would have written back later, is gone with
// the old files. The host then boots from the copies: ext4 replays its
// journal, and the host's systemd starts its services as after a pulled
// plug.
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
	devs, images := []string{card}, []string{l.cardImage(name)}
	driveKind, drive := l.drive(name)
	if drive != "" {
		devs, images = append(devs, drive), append(images, l.driveImage(name))
	}
	hadVcgencmd := fileExists(filepath.Join(l.rootfs(name), vcgencmdStubPath))
	cfg, _ := l.readThermalConfig()

	// the cut: nothing of the host runs, and nothing more reaches its
	// storage, from here on
	l.logf("%s: the power is cut", name)
	if err := freeze(ctx, freezer, "FROZEN"); err != nil {
		return errors.Join(fmt.Errorf("%s: freeze: %w", name, err), freeze(context.WithoutCancel(ctx), freezer, "THAWED"))
	}
	held, err := holdWrites(devs, group)
	if err == nil {
		// what the loop devices had taken before the hold lands in their
		// images: the copy must wait for it, or it reads an image that
		// is being written, newer in one place and older in another, as
		// no pulled plug leaves a card
		var waited time.Duration
		waited, err = drainWrites(ctx, devs, time.Minute)
		if err == nil {
			l.logf("%s: the writes its storage had taken landed in %s", name, waited.Round(time.Millisecond))
		}
	}
	for _, img := range images {
		if err == nil {
			_, err = run(ctx, "cp", "--sparse=always", img, img+".cut")
		}
	}
	if err != nil {
		// no cut after all: the host runs on as it was
		for _, img := range images {
			_ = os.Remove(img + ".cut")
		}
		return errors.Join(fmt.Errorf("%s: copy its storage: %w", name, err), held(), freeze(context.WithoutCancel(ctx), freezer, "THAWED"))
	}

	// half a power cut is worse than none: from here on the host is
	// brought up again, from the copies or, failing that, from what there
	// is. What the old images are still sent (the kernel's writeback, a
	// drive's file system written out as its host's processes die) goes
	// where nothing reads it, at this machine's speed.
	ctx = context.WithoutCancel(ctx)
	err = errors.Join(held(), l.killFrozen(ctx, name))
	if err == nil {
		err = l.swapImages(ctx, name, images, driveKind, drive)
	}
	if err != nil {
		l.logf("%s: the cut went wrong (%v); powering it on from what it has", name, err)
	}
	for _, img := range images {
		_ = os.Remove(img + ".cut")
	}
	return errors.Join(err, l.powerOn(ctx, b, cfg, hadVcgencmd))
}

// holdWrites stops every write to the devices, the host's own and this
// machine's kernel's (its writeback and journal commits, which cgroup v1
// charges to the root group), at one byte a second (throttle's limits);
// release lifts the limits again, until setStorage sets the devices'.
func holdWrites(devs []string, group string) (release func() error, err error) {
	var nums []string
	for _, d := range devs {
		num, err := devNumber(d)
		if err != nil {
			return func() error { return nil }, err
		}
		nums = append(nums, num)
	}
	set := func(s Storage) error {
		var errs []error
		for _, dir := range []string{cgroupRoot + "/blkio", cgroupDir("blkio", group)} {
			for _, num := range nums {
				errs = append(errs, throttle(dir, num, s, true))
			}
		}
		return errors.Join(errs...)
	}
	release = func() error { return set(Storage{}) }
	if err := set(Storage{WriteIOPS: 1, WriteBytes: 1}); err != nil {
		return release, errors.Join(err, release())
	}
	return release, nil
}

// drainWrites waits until no write is in flight in any of the loop
// devices (the writes column of /sys/block/loopN/inflight: requests the
// loop driver has taken and not yet written into its image file), seen
// three times in a row 10 ms apart, and says how long that took; at most
// limit. The hold (holdWrites) keeps new writes from reaching the devices
// meanwhile. How long the loop devices take depends on how busy this
// machine is; the kernel's own count is the evidence, not a guess of a
// fixed wait (200 ms before: measured, they had landed by the first
// look, idle and beside a busy machine, but the copy did not check).
func drainWrites(ctx context.Context, devs []string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	quiet := 0
	for quiet < 3 {
		busy := ""
		for _, d := range devs {
			n, err := inflightWrites(d)
			if err != nil {
				return time.Since(start), err
			}
			if n > 0 {
				busy = fmt.Sprintf("%s has %d writes in flight", d, n)
			}
		}
		if busy == "" {
			quiet++
		} else {
			quiet = 0
			if time.Since(start) > limit {
				return time.Since(start), fmt.Errorf("%s after %s", busy, limit)
			}
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return time.Since(start), err
		}
	}
	return time.Since(start), nil
}

// inflightWrites is the number of write requests the block device dev
// has taken and not completed, from /sys/block.
func inflightWrites(dev string) (int, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "inflight"))
	if err != nil {
		return 0, err
	}
	return parseInflight(string(data))
}

// parseInflight reads /sys/block/DEV/inflight's "reads writes" and returns
// the writes.
func parseInflight(s string) (int, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, fmt.Errorf("inflight: want two counts, have %q", s)
	}
	return strconv.Atoi(f[1])
}

// swapImages takes the host's root and card off this machine and puts the
// copies of the card and the drive in their images' place: the drive on a
// new loop device, which the host's binds then name.
func (l *Lab) swapImages(ctx context.Context, name string, images []string, driveKind, drive string) error {
	if err := unmount(ctx, l.rootfs(name)); err != nil {
		return err
	}
	if err := l.detachCard(ctx, name); err != nil {
		return err
	}
	if err := os.Rename(images[0]+".cut", images[0]); err != nil {
		return err
	}
	if drive == "" {
		return nil
	}
	b, _ := BoardNamed(name)
	s, err := StorageFor(b, driveKind)
	if err != nil {
		return err
	}
	if err := l.detachDrive(ctx, name); err != nil {
		return err
	}
	if err := os.Rename(images[1]+".cut", images[1]); err != nil {
		return err
	}
	_, err = l.loopDrive(ctx, name, driveKind, s)
	return err
}

// powerOn boots the host from its disk as it is, after a cut: its card
// mounted (ext4 replays its journal), the lab's own files in it written
// again (its speed, its storage's kinds, vcgencmd where it had it) and on
// the card before it runs.
func (l *Lab) powerOn(ctx context.Context, b Board, cfg ThermalConfig, vcgencmd bool) error {
	lower := l.lowerOf(b.Name)
	if !mounted(l.rootfs(b.Name)) {
		if _, err := l.mountDisk(ctx, b.Name, lower); err != nil {
			return fmt.Errorf("%s: its disk after the cut: %w", b.Name, err)
		}
	}
	if err := l.setCPU(b, cfg); err != nil {
		return err
	}
	if err := l.setStorage(b, cfg); err != nil {
		return err
	}
	if vcgencmd {
		if err := l.setVcgencmd(b, false); err != nil {
			return err
		}
	}
	if _, err := run(ctx, "sync", "--file-system", l.rootfs(b.Name)); err != nil {
		return err
	}
	l.logf("%s: the power is back; booting", b.Name)
	pid, err := l.startNspawn(b)
	if err != nil {
		return err
	}
	if err := l.waitForSSH(ctx, b, pid, 2*time.Minute); err != nil {
		return fmt.Errorf("%s after the power cut: %w", b.Name, err)
	}
	l.logf("%s: up again after the power cut", b.Name)
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
	if err := killAll(ctx, freezer, 20*time.Second); err != nil {
		return fmt.Errorf("%s: %w", name, err)
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
