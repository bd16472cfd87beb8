package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Storage is what a board's data lives on, as the lab simulates it: a
// loop device of the host's own over an image file, which the host sees as
// Dev, and which the machine's block I/O throttling (cgroup v1 blkio)
// limits to the kind's published figures at board speed. The figures are
// per second: 4 KB random reads and writes, and bytes on the bus.
type Storage struct {
	Kind                  string // StorageKinds: "sd-a1", "sd-a2", "emmc", "usb-ssd", "nvme"
	Dev                   string // the device inside the host: /dev/mmcblk0, /dev/sda, /dev/nvme0n1
	ReadIOPS, WriteIOPS   int
	ReadBytes, WriteBytes int64
}

// The kinds of storage the lab simulates. Their figures, and where they
// were published, are in storageFor.
var StorageKinds = []string{"sd-a1", "sd-a2", "emmc", "usb-ssd", "nvme"}

const mb = 1_000_000

// sdBus is the SD card interface's reading speed on the board's kind, in
// bytes a second: about 22 MB/s on the Pi 3B, 3B+, Zero W and Zero 2 W
// (22.4 to 23.7 measured), about 44 MB/s on the Pi 4 and CM4 (41.5 to
// 46 measured), about 90 MB/s on the Pi 5 (SDR104; 89 to 93 measured).
func sdBus(kind string) int64 {
	switch kind {
	case "pi5", "pi5-4gb":
		return 90 * mb
	case "pi4", "pi4-2gb", "cm4":
		return 44 * mb
	}
	return 22 * mb
}

// StorageFor is a kind of storage on a board, with its figures: an error
// names the kinds, or says the board has no such bus. The figures, as
// published (4 KB random IOPS; MB/s on the bus):
//
//   - sd-a1: the A1 class's minimum, 1,500 read and 500 write IOPS and 10
//     MB/s sustained writing (SD Association, Application Performance
//     Class, SD 5.1), reading at the board's SD bus (sdBus: fm4dd's
//     sbc-benchmarks measured 22.8 MB/s on a Pi 3B and 22.4 on a Zero W;
//     a Pi 4 reads about 44, a Pi 5 about 90).
//   - sd-a2: the Raspberry Pi A2 card as Raspberry Pi publishes it
//     (raspberrypi/documentation, accessories/sd-cards): 3,200 read and
//     1,200 write IOPS on a Pi 4, 5,000 and 2,000 on a Pi 5; a board
//     without the A2 command queueing gets A1's; writing at 30 MB/s (its 32
//     GB card wrote about 33 sequentially), or the bus.
//   - emmc: the CM4's eMMC. No figure for it is published as text: the
//     CM3+'s eMMC did 9 MB/s of 4 KB random reads and writes (iozone, QD1;
//     Jeff Geerling, turing-pi-cluster#11), and Geerling's CM4 review
//     found the CM4's random I/O twice the CM3's and its sequential speed
//     that of the fastest microSD cards on a Pi 4: 4,400 read and write
//     IOPS, 46 MB/s reading, 36 writing.
//   - usb-ssd: a SATA SSD on USB 3 with UAS (a Pi 4 or Pi 5): 20.6 MB/s
//     of 4 KB random reads and 28.5 of writes at QD1 (Jeff Geerling,
//     iozone, Kingston A400), 5,000 and 7,000 IOPS; 310 MB/s reading
//     (hdparm) and 300 writing.
//   - nvme: an NVMe SSD on the Pi 5's PCIe Gen 2 x1 (Crucial P3 Plus,
//     iozone, raspberry-pi-pcie-devices#664): 442 MB/s reading and 430
//     writing, 71 MB/s of 4 KB random reads and 215 of writes at QD1,
//     17,000 and 50,000 IOPS.
func StorageFor(b Board, kind string) (Storage, error) {
	board := b.Kind
	pi5 := board == "pi5" || board == "pi5-4gb"
	pi4 := board == "pi4" || board == "pi4-2gb"
	s := Storage{Kind: kind, Dev: "/dev/mmcblk0"}
	switch kind {
	case "sd-a1":
		s.ReadIOPS, s.WriteIOPS, s.ReadBytes, s.WriteBytes = 1500, 500, sdBus(board), 10*mb
	case "sd-a2":
		s.ReadIOPS, s.WriteIOPS, s.ReadBytes, s.WriteBytes = 1500, 500, sdBus(board), min(30*mb, sdBus(board))
		switch {
		case pi5:
			s.ReadIOPS, s.WriteIOPS = 5000, 2000
		case pi4 || board == "cm4":
			s.ReadIOPS, s.WriteIOPS = 3200, 1200
		}
	case "emmc":
		if board != "cm4" {
			return s, fmt.Errorf("%s: a %s has no eMMC (the CM4 has)", b.Name, b.Model)
		}
		s.ReadIOPS, s.WriteIOPS, s.ReadBytes, s.WriteBytes = 4400, 4400, 46*mb, 36*mb
	case "usb-ssd":
		if !pi4 && !pi5 {
			return s, fmt.Errorf("%s: a %s has no USB 3 (usb-ssd is for the Pi 4 and Pi 5)", b.Name, b.Model)
		}
		s.Dev, s.ReadIOPS, s.WriteIOPS, s.ReadBytes, s.WriteBytes = "/dev/sda", 5000, 7000, 310*mb, 300*mb
	case "nvme":
		if !pi5 {
			return s, fmt.Errorf("%s: a %s has no PCIe for an NVMe drive (nvme is for the Pi 5)", b.Name, b.Model)
		}
		s.Dev, s.ReadIOPS, s.WriteIOPS, s.ReadBytes, s.WriteBytes = "/dev/nvme0n1", 17000, 50000, 442*mb, 430*mb
	default:
		return s, fmt.Errorf("%s: no storage kind %q (the lab's: %s)", b.Name, kind, strings.Join(StorageKinds, ", "))
	}
	return s, nil
}

// Card is the board's own storage, which it boots from: an A1 card in the
// 3B, 3B+, Zero W and Zero 2 W, an A2 card in the Pi 4 and Pi 5, the CM4's
// eMMC.
func (b Board) Card() Storage {
	kind := "sd-a1"
	switch b.Kind {
	case "pi4", "pi4-2gb", "pi5", "pi5-4gb":
		kind = "sd-a2"
	case "cm4":
		kind = "emmc"
	}
	s, _ := StorageFor(b, kind)
	return s
}

// cardSize is the size of a host's card image: sparse, so only what the
// host writes takes room on the machine.
const cardSize = "16G"

// rootSource is what the host's mount table says its root is: the card's
// second partition, as on a Pi (Raspberry Pi OS's root; the first is its
// boot partition).
const rootSource = "/dev/mmcblk0p2"

func (l *Lab) cardImage(name string) string {
	return filepath.Join(l.hostDir(name), Prefix+"-"+name+"-card.img")
}
func (l *Lab) cardDir(name string) string     { return filepath.Join(l.hostDir(name), "card") }
func (l *Lab) cardDevFile(name string) string { return filepath.Join(l.hostDir(name), "card.dev") }

// attachCard gives the host its card: a sparse image file, a loop device
// over it, an ext4 file system on it, mounted in the host's folder, where
// the host's disk takes its writes (mountDisk). It returns the loop device.
// The card is as fast as the machine's disk at full speed, and as slow as
// its kind only through the throttling (setStorage): the loop device
// writes into the machine's page cache (no direct I/O) and the card's
// file system sends it no cache flushes (barrier=0). A flush through the
// loop device to the machine's disk made each fsync'd 4 KB write six
// times slower than on the machine's disk (766 a second against 4,640),
// and dpkg and the tests' commits fsync all the time; a lab host's data
// lives as long as the machine's page cache anyway, which outlives a
// killed host.
func (l *Lab) attachCard(ctx context.Context, name string) (string, error) {
	img, dir := l.cardImage(name), l.cardDir(name)
	if dev := l.cardDev(name); dev != "" && mounted(dir) {
		return dev, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	fresh := !fileExists(img)
	if fresh {
		if _, err := run(ctx, "truncate", "-s", cardSize, img); err != nil {
			return "", err
		}
	}
	// two hosts booting at once may be offered the same free device: the
	// one that loses tries again
	var dev string
	var err error
	for try := 0; try < 5; try++ {
		if dev, err = run(ctx, "losetup", "--find", "--show", img); err == nil {
			break
		}
		if err := sleep(ctx, time.Duration(50*(try+1))*time.Millisecond); err != nil {
			return "", err
		}
	}
	if err != nil {
		return "", fmt.Errorf("a loop device for the card: %w", err)
	}
	dev = strings.TrimSpace(dev)
	if err := os.WriteFile(l.cardDevFile(name), []byte(dev+"\n"), 0o644); err != nil {
		return "", errors.Join(err, detach(ctx, dev))
	}
	if fresh {
		// no background zeroing of inode tables: it would write the whole
		// card in the host's first minutes
		if _, err := run(ctx, "mkfs.ext4", "-q", "-F", "-L", "rootfs", "-E", "lazy_itable_init=1,lazy_journal_init=1", dev); err != nil {
			return "", errors.Join(err, detach(ctx, dev))
		}
	}
	if _, err := run(ctx, "mount", "-o", "noinit_itable,barrier=0", dev, dir); err != nil {
		return "", errors.Join(err, detach(ctx, dev))
	}
	return dev, nil
}

// cardDev is the host's card's loop device, "" when it has none attached.
func (l *Lab) cardDev(name string) string {
	data, err := os.ReadFile(l.cardDevFile(name))
	if err != nil {
		return ""
	}
	dev := strings.TrimSpace(string(data))
	back, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "loop/backing_file"))
	if err != nil || strings.TrimSpace(string(back)) != l.cardImage(name) {
		return ""
	}
	return dev
}

// detachCard takes the card's file system and loop device away, and the
// throttling rules on it (the root group's too: the next loop device of
// that number would inherit them).
func (l *Lab) detachCard(ctx context.Context, name string) error {
	if err := unmount(ctx, l.cardDir(name)); err != nil {
		return err
	}
	dev := l.cardDev(name)
	if dev == "" {
		return nil
	}
	if num, err := devNumber(dev); err == nil {
		_ = throttle(cgroupRoot+"/blkio", num, Storage{}, true)
	}
	return detach(ctx, dev)
}

func detach(ctx context.Context, dev string) error {
	_, err := run(ctx, "losetup", "--detach", dev)
	return err
}

// devNumber is a block device's MAJ:MIN.
func devNumber(dev string) (string, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// throttle writes s's limits on the device num into the blkio group dir
// (zero removes a limit); writes only: the root group, which pays for the
// kernel's background writeback, limits only writes (cgroup v1
// throttling is not hierarchical: a rule on a host's group does not hold
// the writeback of what it wrote).
func throttle(dir, num string, s Storage, writes bool) error {
	rules := map[string]int64{
		"blkio.throttle.write_iops_device": int64(s.WriteIOPS),
		"blkio.throttle.write_bps_device":  s.WriteBytes,
	}
	if !writes {
		rules["blkio.throttle.read_iops_device"] = int64(s.ReadIOPS)
		rules["blkio.throttle.read_bps_device"] = s.ReadBytes
	}
	var errs []error
	for file, v := range rules {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(num+" "+strconv.FormatInt(v, 10)), 0o644); err != nil && v != 0 {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
		}
	}
	return errors.Join(errs...)
}

// setStorage limits the host's card, and its drive if it has one, to
// their kinds' figures at board speed, and lifts the limits at full
// speed. The host's /etc/pisim/storage says which kinds they are.
func (l *Lab) setStorage(b Board, cfg ThermalConfig) error {
	dev := l.cardDev(b.Name)
	if dev == "" {
		return nil // no card here (see prepareRoot): the machine's disk
	}
	card := b.Card()
	devices := []struct {
		dev string
		s   Storage
	}{{dev, card}}
	kinds := card.Kind
	if kind, ddev := l.drive(b.Name); ddev != "" {
		s, err := StorageFor(b, kind)
		if err != nil {
			return err
		}
		devices = append(devices, struct {
			dev string
			s   Storage
		}{ddev, s})
		kinds += " " + kind
	}
	if err := writeAtomic(filepath.Join(l.rootfs(b.Name), "etc/pisim/storage"), kinds+"\n"); err != nil {
		return err
	}
	for _, d := range devices {
		num, err := devNumber(d.dev)
		if err != nil {
			return err
		}
		limits := d.s
		if cfg.speed(b.Name) != CPUBoard {
			limits = Storage{}
		}
		if err := throttle(cgroupDir("blkio", machineName(b.Name)), num, limits, false); err != nil {
			return err
		}
		if err := throttle(cgroupRoot+"/blkio", num, limits, true); err != nil {
			return err
		}
	}
	return nil
}

// driveSize is the size of a host's drive image, sparse.
const driveSize = "64G"

func (l *Lab) driveImage(name string) string {
	return filepath.Join(l.hostDir(name), Prefix+"-"+name+"-drive.img")
}
func (l *Lab) driveFile(name string) string { return filepath.Join(l.hostDir(name), "drive") }

// bindsFile holds the host's nspawn options for its drive, which its
// supervisor reads at every boot.
func (l *Lab) bindsFile(name string) string { return filepath.Join(l.hostDir(name), "nspawn-binds") }

// drive is the host's drive besides its card, if it has one: its kind and
// its loop device.
func (l *Lab) drive(name string) (kind, dev string) {
	kv, err := readKV(l.driveFile(name))
	if err != nil {
		return "", ""
	}
	back, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(kv["dev"]), "loop/backing_file"))
	if err != nil || strings.TrimSpace(string(back)) != l.driveImage(name) {
		return "", ""
	}
	return kv["kind"], kv["dev"]
}

// attachDrive plugs a drive of kind into the running host: a sparse
// image, a loop device over it, and the device node the board's kernel
// would make for it (/dev/sda, /dev/nvme0n1) in the host's /dev, as a
// drive plugged into a running Pi appears; blank, as a new drive comes.
// The host keeps it across reboots (its supervisor binds it at every boot,
// from bindsFile). A host that has
// a drive keeps it: another kind is refused.
func (l *Lab) attachDrive(ctx context.Context, b Board, kind string) error {
	s, err := StorageFor(b, kind)
	if err != nil {
		return err
	}
	if have, dev := l.drive(b.Name); dev != "" {
		if have != kind {
			return fmt.Errorf("%s has a %s drive already: take the host down (lab down --hosts %s) to give it a %s", b.Name, have, b.Name, kind)
		}
		return nil
	}
	if _, err := run(ctx, "truncate", "-s", driveSize, l.driveImage(b.Name)); err != nil {
		return err
	}
	dev, err := l.loopDrive(ctx, b.Name, kind, s)
	if err != nil {
		return err
	}
	num, err := devNumber(dev)
	if err != nil {
		return err
	}
	major, minor, _ := strings.Cut(num, ":")
	initPID := childOf(childOf(l.supervisor(b.Name), "systemd-nspawn"), "systemd")
	if initPID <= 0 {
		return fmt.Errorf("%s: its init is not running", b.Name)
	}
	// the node, and the stable name udev gives a drive (no udev runs in
	// a host): what ls /dev/disk/by-id lists on a Pi
	if _, err := run(ctx, "nsenter", "-t", strconv.Itoa(initPID), "-m", "--", "sh", "-c",
		`rm -f -- "$1" && mknod -m 0660 -- "$1" b "$2" "$3" && chgrp -- disk "$1" 2>/dev/null; `+
			`mkdir -p /dev/disk/by-id && ln -sfn -- "../../${1##*/}" "/dev/disk/by-id/$4"; true`, "sh", s.Dev, major, minor, DriveID(b.Name, kind)); err != nil {
		return fmt.Errorf("%s: its %s: %w", b.Name, s.Dev, err)
	}
	l.logf("%s: a %s drive plugged in, %s, /dev/disk/by-id/%s (a blank %s image)", b.Name, kind, s.Dev, DriveID(b.Name, kind), driveSize)
	if bps, iops, err := l.MachineDisk(ctx); err != nil {
		l.logf("%s: %v", b.Name, err)
	} else if short := slowerDisk(s, bps, iops); short != "" {
		l.logf("%s: %s: its drive is no faster than that where the machine's page cache does not hold what the host writes (what pidb measures there is this machine's disk, not the drive)", b.Name, short)
	}
	return nil
}

// DriveID is the name in /dev/disk/by-id of the drive of kind plugged
// into host, as udev names a USB drive (usb-VENDOR_MODEL_SERIAL-0:0) or an
// NVMe one (nvme-MODEL_SERIAL).
func DriveID(host, kind string) string {
	if strings.HasPrefix(kind, "nvme") {
		return "nvme-PIDBLAB_" + kind + "_" + host
	}
	return "usb-PIDBLAB_" + kind + "_" + host + "-0:0"
}

// loopDrive puts a loop device over the host's drive image and records it
// (driveFile) and the bind its supervisor gives the host at every boot
// (bindsFile), as the board's kernel names a drive of storage s.
func (l *Lab) loopDrive(ctx context.Context, name, kind string, s Storage) (string, error) {
	out, err := run(ctx, "losetup", "--find", "--show", l.driveImage(name))
	if err != nil {
		return "", fmt.Errorf("a loop device for the drive: %w", err)
	}
	dev := strings.TrimSpace(out)
	if err := writeFile(l.driveFile(name), "kind="+kind+"\ndev="+dev+"\n", 0o644); err != nil {
		return "", errors.Join(err, detach(ctx, dev))
	}
	if err := writeFile(l.bindsFile(name), "--bind="+dev+":"+s.Dev+"\n", 0o644); err != nil {
		return "", errors.Join(err, detach(ctx, dev))
	}
	return dev, nil
}

// detachDrive takes the host's drive's loop device away, with the root
// group's limits on it.
func (l *Lab) detachDrive(ctx context.Context, name string) error {
	_, dev := l.drive(name)
	if dev == "" {
		return nil
	}
	if num, err := devNumber(dev); err == nil {
		_ = throttle(cgroupRoot+"/blkio", num, Storage{}, true)
	}
	return detach(ctx, dev)
}

// Plug plugs a drive of kind ("usb-ssd", "nvme") into the running host
// name, as lab up --storage does at boot, limited to its kind's figures at
// the host's speed.
func (l *Lab) Plug(ctx context.Context, name, kind string) error {
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
		return fmt.Errorf("%s is not up", name)
	}
	if err := l.attachDrive(ctx, b, kind); err != nil {
		return err
	}
	cfg, _ := l.readThermalConfig()
	return l.setStorage(b, cfg)
}

// HostFile reads a file of the host's root filesystem as this machine
// sees it (not /run or /tmp, the host's own tmpfs): what a test watches
// while the host's link is cut.
func (l *Lab) HostFile(name, p string) ([]byte, error) {
	return os.ReadFile(filepath.Join(l.rootfs(name), filepath.Clean("/"+p)))
}
