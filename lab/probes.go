package lab

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"pidb/dbms"
)

// What the lab tells about its hosts: status, CPU time, memory limit, the
// simulated temperature, and what it left on the machine.

func sshAnswers(addr netip.Addr, timeout time.Duration) bool {
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(addr, 22).String(), timeout)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 4)
	n, _ := io.ReadFull(c, buf)
	return n == 4 && string(buf) == "SSH-"
}

// HostStatus is one lab host as Status reports it.
type HostStatus struct {
	Name    string      `json:"host"`
	Address string      `json:"address"`
	Model   string      `json:"model"`
	RAM     uint64      `json:"ram_bytes"`
	Engine  dbms.Family `json:"engine"`
	State   string      `json:"state"` // up, booting (it rebooted), down, broken (left by a killed run)
	Speed   string      `json:"speed"` // board or full: the CPU speed it runs at, or boots at
	// Storage is its card's kind, and its drive's after it ("sd-a2
	// usb-ssd"); its card's kind while it is down
	Storage string `json:"storage"`
	// Release is the release it was booted with (see Releases), empty
	// when it has no folder (never booted, or removed)
	Release string `json:"release,omitempty"`
	// Latency is the round trip the lab's link adds to it ("20ms"), or
	// empty for none
	Latency string `json:"latency,omitempty"`
}

// Status reports every board of the fleet.
func (l *Lab) Status() []HostStatus {
	var out []HostStatus
	for _, b := range l.hosts() {
		s := HostStatus{Name: b.Name, Address: Address(b).String(), Model: b.Model, RAM: b.RAMBytes, Engine: b.Engine, State: "down",
			Speed: l.Speed(b.Name), Storage: b.Card().Kind, Release: l.Release(b.Name)}
		if kind, _ := l.drive(b.Name); kind != "" {
			s.Storage += " " + kind
		}
		if d := l.RoundTrip(b.Name); d > 0 {
			s.Latency = d.String()
		}
		switch {
		case l.running(b.Name):
			s.State = "up"
		case l.powered(b.Name):
			s.State = "booting"
		case fileExists(l.hostDir(b.Name)) || fileExists(netnsPath(b.Name)) || fileExists(cgroupDir("memory", machineName(b.Name))):
			s.State = "broken"
		}
		out = append(out, s)
	}
	return out
}

// SetTemp sets the temperature the host's thermal zone reports, in
// millidegrees Celsius, as /sys/class/thermal/thermal_zone0/temp does. The
// file is replaced atomically, so a reader never sees half a number.
func (l *Lab) SetTemp(name string, milliC int) error {
	dir := filepath.Join(l.rootfs(name), "etc/pisim/thermal/thermal_zone0")
	if !fileExists(dir) {
		return fmt.Errorf("%s: no such lab host", name)
	}
	return writeAtomic(filepath.Join(dir, "temp"), strconv.Itoa(milliC)+"\n")
}

// CPUTime returns the CPU time the host's processes have used since it booted.
func (l *Lab) CPUTime(name string) (time.Duration, error) {
	data, err := os.ReadFile(filepath.Join(cgroupDir("cpuacct", machineName(name)), "cpuacct.usage"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: cpuacct.usage: %w", name, err)
	}
	return time.Duration(ns), nil
}

// waitTimes returns, for each thread of the host, the time it has spent
// waiting to run (the scheduler's run_delay, /proc/TID/schedstat): CPU it
// wanted while this machine's other work had it. A thread that is gone by
// the time it is read is left out.
func (l *Lab) waitTimes(name string) map[int]time.Duration {
	out := map[int]time.Duration{}
	_ = filepath.WalkDir(cgroupDir("cpuacct", machineName(name)), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "tasks" {
			return nil
		}
		data, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(data)) {
			tid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			st, err := os.ReadFile("/proc/" + f + "/schedstat")
			if err != nil {
				continue
			}
			if fs := strings.Fields(string(st)); len(fs) >= 2 {
				if ns, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
					out[tid] = time.Duration(ns)
				}
			}
		}
		return nil
	})
	return out
}

// MemoryLimit returns the memory limit of the host's cgroup, in bytes.
func (l *Lab) MemoryLimit(name string) (uint64, error) {
	data, err := os.ReadFile(filepath.Join(cgroupDir("memory", machineName(name)), "memory.limit_in_bytes"))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

// Leftovers lists what the lab has on this machine: processes, interfaces,
// network namespaces, the nft table, cgroups and mounts (a host's disk
// layered over a snapshot) carrying the lab's prefix.
// After Down it is empty.
func Leftovers() []string {
	var out []string
	for _, pat := range []string{"--machine=" + Prefix + "-", Prefix + "-apt-proxy", simulatorProcess + " "} {
		for _, pid := range processesMatching(pat) {
			out = append(out, fmt.Sprintf("process %d", pid))
		}
	}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if strings.HasPrefix(ifc.Name, Prefix) {
			out = append(out, "interface "+ifc.Name)
		}
	}
	nss, _ := filepath.Glob("/run/netns/" + Prefix + "*")
	for _, ns := range nss {
		out = append(out, "network namespace "+filepath.Base(ns))
	}
	if tables, err := exec.Command("nft", "list", "tables").Output(); err == nil {
		for _, line := range strings.Split(string(tables), "\n") {
			if f := strings.Fields(line); len(f) == 3 && strings.HasPrefix(f[2], Prefix) {
				out = append(out, "nft "+line)
			}
		}
	}
	for _, h := range cgroupHierarchies {
		groups, _ := filepath.Glob(filepath.Join(cgroupRoot, h, Prefix+"*"))
		for _, g := range groups {
			out = append(out, "cgroup "+g)
		}
	}
	// a host's card (attachCard): its loop device, its file system, and
	// the root group's limits on it
	cards := map[string]bool{}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		back, _ := os.ReadFile(f)
		if b := strings.TrimSpace(string(back)); strings.HasPrefix(filepath.Base(b), Prefix+"-") {
			dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(f)))
			cards[dev] = true
			out = append(out, "loop device "+dev+" over "+b)
		}
	}
	for _, f := range []string{"write_iops_device", "write_bps_device", "read_iops_device", "read_bps_device"} {
		data, _ := os.ReadFile(filepath.Join(cgroupRoot, "blkio", "blkio.throttle."+f))
		for _, rule := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if strings.HasPrefix(rule, "7:") { // a loop device's
				out = append(out, "blkio rule "+f+" "+rule)
			}
		}
	}
	// a host's disk, layered over the base image or a snapshot (mountDisk)
	for _, m := range mounts() {
		if strings.HasPrefix(m.source, Prefix+"-") || cards[m.source] || (m.fstype == "overlay" && m.source == rootSource && strings.HasSuffix(m.point, "/rootfs")) {
			out = append(out, "mount "+m.point)
		}
	}
	return out
}
