package lab

import (
	"strings"
	"testing"
)

// TestCards: each board's own storage and its limits, written out: an A1
// card on the boards before the Pi 4 (its class's minimum IOPS, its
// board's SD bus), the Raspberry Pi A2 card as measured on a Pi 4 and a
// Pi 5, the CM4's eMMC.
func TestCards(t *testing.T) {
	want := map[string]Storage{
		"zero":    {Kind: "sd-a1", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 22_000_000, WriteBytes: 10_000_000},
		"zero2":   {Kind: "sd-a1", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 22_000_000, WriteBytes: 10_000_000},
		"pi3":     {Kind: "sd-a1", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 22_000_000, WriteBytes: 10_000_000},
		"pi3plus": {Kind: "sd-a1", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 22_000_000, WriteBytes: 10_000_000},
		"pi4":     {Kind: "sd-a2", Dev: "/dev/mmcblk0", ReadIOPS: 3200, WriteIOPS: 1200, ReadBytes: 44_000_000, WriteBytes: 30_000_000},
		"pi4-2gb": {Kind: "sd-a2", Dev: "/dev/mmcblk0", ReadIOPS: 3200, WriteIOPS: 1200, ReadBytes: 44_000_000, WriteBytes: 30_000_000},
		"pi5":     {Kind: "sd-a2", Dev: "/dev/mmcblk0", ReadIOPS: 5000, WriteIOPS: 2000, ReadBytes: 90_000_000, WriteBytes: 30_000_000},
		"pi5-4gb": {Kind: "sd-a2", Dev: "/dev/mmcblk0", ReadIOPS: 5000, WriteIOPS: 2000, ReadBytes: 90_000_000, WriteBytes: 30_000_000},
		"cm4":     {Kind: "emmc", Dev: "/dev/mmcblk0", ReadIOPS: 4400, WriteIOPS: 4400, ReadBytes: 46_000_000, WriteBytes: 36_000_000},
	}
	for _, b := range Boards() {
		w, ok := want[b.Kind]
		if !ok {
			t.Errorf("%s: no expected card", b.Kind)
			continue
		}
		if got := b.Card(); got != w {
			t.Errorf("%s: card %+v, want %+v", b.Kind, got, w)
		}
	}
	if len(want) != len(Boards()) {
		t.Errorf("%d boards, %d expected cards", len(Boards()), len(want))
	}
}

// TestStorageKinds: the drives a board can have besides its card, and
// the refusals of what it cannot have.
func TestStorageKinds(t *testing.T) {
	board := func(name string) Board { b, _ := BoardNamed(name); return b }
	ok := map[[2]string]Storage{
		{"pi4", "usb-ssd"}: {Kind: "usb-ssd", Dev: "/dev/sda", ReadIOPS: 5000, WriteIOPS: 7000, ReadBytes: 310_000_000, WriteBytes: 300_000_000},
		{"pi5", "usb-ssd"}: {Kind: "usb-ssd", Dev: "/dev/sda", ReadIOPS: 5000, WriteIOPS: 7000, ReadBytes: 310_000_000, WriteBytes: 300_000_000},
		{"pi5", "nvme"}:    {Kind: "nvme", Dev: "/dev/nvme0n1", ReadIOPS: 17000, WriteIOPS: 50000, ReadBytes: 442_000_000, WriteBytes: 430_000_000},
		{"pi3", "sd-a2"}:   {Kind: "sd-a2", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 22_000_000, WriteBytes: 22_000_000},
		{"pi4", "sd-a1"}:   {Kind: "sd-a1", Dev: "/dev/mmcblk0", ReadIOPS: 1500, WriteIOPS: 500, ReadBytes: 44_000_000, WriteBytes: 10_000_000},
	}
	for k, want := range ok {
		got, err := StorageFor(board(k[0]), k[1])
		if err != nil || got != want {
			t.Errorf("%s with %s: %+v, %v; want %+v", k[0], k[1], got, err, want)
		}
	}
	for k, msg := range map[[2]string]string{
		{"pi3", "usb-ssd"}: "pi3: a Raspberry Pi 3 Model B Rev 1.2 has no USB 3",
		{"pi4", "nvme"}:    "pi4: a Raspberry Pi 4 Model B Rev 1.4 has no PCIe",
		{"pi4", "emmc"}:    "has no eMMC (the CM4 has)",
		{"zero", "ssd"}:    `zero: no storage kind "ssd" (the lab's: sd-a1, sd-a2, emmc, usb-ssd, nvme)`,
	} {
		if _, err := StorageFor(board(k[0]), k[1]); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s with %s: %v; want %q", k[0], k[1], err, msg)
		}
	}
}

// TestSlowerDisk: a drive faster than this machine's disk is named, with
// both figures; one the disk keeps up with is not.
func TestSlowerDisk(t *testing.T) {
	pi5, _ := BoardNamed("pi5")
	nvme, err := StorageFor(pi5, "nvme")
	if err != nil {
		t.Fatal(err)
	}
	ssd, err := StorageFor(pi5, "usb-ssd")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s     Storage
		bytes int64
		iops  int
		want  string
	}{
		{nvme, 180_000_000, 900, "this machine's disk writes 180 MB/s and 900 flushed 4 KB writes a second, less than the nvme drive's 430 MB/s and 50000"},
		{nvme, 2_000_000_000, 900, "this machine's disk does 900 flushed 4 KB writes a second, fewer than the nvme drive's 50000"},
		{ssd, 250_000_000, 80_000, "this machine's disk writes 250 MB/s, less than the usb-ssd drive's 300"},
		{ssd, 2_000_000_000, 80_000, ""},
	} {
		if got := slowerDisk(c.s, c.bytes, c.iops); got != c.want {
			t.Errorf("%s on %d B/s, %d IOPS: %q, want %q", c.s.Kind, c.bytes, c.iops, got, c.want)
		}
	}
}

// The power cut's wait reads the writes column of /sys/block/DEV/inflight,
// whose two counts the kernel pads to eight places.
func TestParseInflight(t *testing.T) {
	for in, want := range map[string]int{
		"       0        0\n": 0,
		"       3       17\n": 17,
		"0 2":                 2,
	} {
		got, err := parseInflight(in)
		if err != nil || got != want {
			t.Errorf("parseInflight(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0 x", "1 2 3"} {
		if _, err := parseInflight(bad); err == nil {
			t.Errorf("parseInflight(%q): no error", bad)
		}
	}
}
