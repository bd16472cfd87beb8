package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// MachineDisk is what the disk under the lab's folder does, as dd measures
// it with direct I/O: bytes written a second in 1 MB blocks, and 4 KB
// writes a second each flushed to the disk (O_DSYNC). A drive's image is a
// file on that disk, so a drive faster than it (an NVMe SSD on a machine
// with a SATA disk) runs at the disk's speed wherever the machine's page
// cache does not hold what the host writes and flushes. It measures once,
// a few seconds, and keeps the figures in the lab's folder for as long as
// the folder is on the same device.
func (l *Lab) MachineDisk(ctx context.Context) (bytesPerSec int64, writeIOPS int, err error) {
	devID, err := deviceOf(l.Dir)
	if err != nil {
		return 0, 0, err
	}
	file := filepath.Join(l.Dir, "machine-disk")
	if kv, err := readKV(file); err == nil && kv["dev"] == devID {
		b, err1 := strconv.ParseInt(kv["write_bytes"], 10, 64)
		n, err2 := strconv.Atoi(kv["write_iops"])
		if err1 == nil && err2 == nil && b > 0 && n > 0 {
			return b, n, nil
		}
	}
	l.logf("measuring the disk under %s (dd, direct I/O; once, a few seconds): a drive can be no faster than it", l.Dir)
	probe := filepath.Join(l.Dir, ".disk-probe")
	defer os.Remove(probe)
	timed := func(args ...string) (time.Duration, error) {
		began := time.Now()
		_, err := run(ctx, "dd", append([]string{"if=/dev/zero", "of=" + probe}, args...)...)
		return time.Since(began), err
	}
	const seqMB, syncWrites = 256, 1000
	took, err := timed("bs=1M", "count="+strconv.Itoa(seqMB), "oflag=direct", "conv=fsync")
	if err != nil {
		return 0, 0, fmt.Errorf("measure the disk: %w", err)
	}
	bytesPerSec = int64(float64(seqMB<<20) / took.Seconds())
	took, err = timed("bs=4k", "count="+strconv.Itoa(syncWrites), "oflag=direct,dsync", "conv=notrunc")
	if err != nil {
		return 0, 0, fmt.Errorf("measure the disk: %w", err)
	}
	writeIOPS = int(float64(syncWrites) / took.Seconds())
	l.logf("the disk under %s: %d MB/s written in 1 MB blocks, %d flushed 4 KB writes a second", l.Dir, bytesPerSec/mb, writeIOPS)
	return bytesPerSec, writeIOPS, writeFile(file, fmt.Sprintf("dev=%s\nwrite_bytes=%d\nwrite_iops=%d\nmeasured=%s\n", devID, bytesPerSec, writeIOPS, time.Now().UTC().Format(time.RFC3339)), 0o644)
}

// slowerDisk says how the machine's disk falls short of a drive's
// figures, or "" where it does not.
func slowerDisk(s Storage, bytesPerSec int64, writeIOPS int) string {
	switch {
	case bytesPerSec < s.WriteBytes && writeIOPS < s.WriteIOPS:
		return fmt.Sprintf("this machine's disk writes %d MB/s and %d flushed 4 KB writes a second, less than the %s drive's %d MB/s and %d", bytesPerSec/mb, writeIOPS, s.Kind, s.WriteBytes/mb, s.WriteIOPS)
	case bytesPerSec < s.WriteBytes:
		return fmt.Sprintf("this machine's disk writes %d MB/s, less than the %s drive's %d", bytesPerSec/mb, s.Kind, s.WriteBytes/mb)
	case writeIOPS < s.WriteIOPS:
		return fmt.Sprintf("this machine's disk does %d flushed 4 KB writes a second, fewer than the %s drive's %d", writeIOPS, s.Kind, s.WriteIOPS)
	}
	return ""
}
