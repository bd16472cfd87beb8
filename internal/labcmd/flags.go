package labcmd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"pidb/lab"
	"pidb/usage"
)

// The lab's flags, read here: the lab takes what they mean (its fields),
// never their syntax.

// labHostsFlag reads --hosts: board names, each alone ("pi4") or with a
// count ("pi5=3" boots pi5-1, pi5-2 and pi5-3), or numbered hosts by name
// ("pi5-2"), in the order given, each once.
func labHostsFlag(spec string) ([]string, error) {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, count, counted := strings.Cut(part, "=")
		b, ok := lab.BoardNamed(name)
		if !ok || (counted && b.Kind != b.Name) {
			return nil, usage.Errorf("--hosts: no lab board %q (the lab has %s; NAME=N boots N of one, numbered)", name, strings.Join(lab.Kinds(), ", "))
		}
		if !counted {
			add(b.Name)
			continue
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 1 || n > lab.MaxNumbered {
			return nil, usage.Errorf("--hosts %s: want a count from 1 to %d", part, lab.MaxNumbered)
		}
		for i := 1; i <= n; i++ {
			add(fmt.Sprintf("%s-%d", name, i))
		}
	}
	if len(out) == 0 {
		return nil, usage.Errorf("--hosts: no boards named")
	}
	return out, nil
}

// perHost reads a flag that gives every host one value, or some hosts
// each one: "fan", or "pi4=case,zero=fan"; every host is lab.AllHosts's key.
// check reads a value (the value to keep, and whether it is one); want
// says what is, and example is one.
func perHost[T ~string](flag, spec, want, example string, check func(string) (string, bool)) (map[string]T, error) {
	out := map[string]T{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, v, named := strings.Cut(strings.TrimSpace(part), "=")
		if !named {
			name, v = lab.AllHosts, name
		}
		kept, ok := check(strings.TrimSpace(v))
		if !ok {
			return nil, usage.Errorf("%s %q: want %s, for all hosts or as NAME=%s", flag, part, want, example)
		}
		if _, ok := lab.BoardNamed(name); named && !ok {
			return nil, usage.Errorf("%s: no lab host %q (the lab's boards: %s, and their numbered hosts)", flag, name, strings.Join(lab.Kinds(), ", "))
		}
		out[name] = T(kept)
	}
	return out, nil
}

// oneOf checks a value against a list.
func oneOf(values ...string) func(string) (string, bool) {
	return func(v string) (string, bool) { return v, slices.Contains(values, v) }
}

// roundTrip reads a latency: a duration up to lab.MaxLatency, or 0.
func roundTrip(v string) (string, bool) {
	if v == "0" {
		return (time.Duration(0)).String(), true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > lab.MaxLatency {
		return "", false
	}
	return d.String(), true
}

// drivesFlag reads --storage: NAME=usb-ssd (a Pi 4 or Pi 5) or NAME=nvme
// (a Pi 5), a drive beside the host's card.
func drivesFlag(spec string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, kind, ok := strings.Cut(strings.TrimSpace(part), "=")
		b, known := lab.BoardNamed(name)
		switch {
		case !ok:
			return nil, usage.Errorf("--storage %q: want NAME=usb-ssd or NAME=nvme", part)
		case !known:
			return nil, usage.Errorf("--storage: no lab host %q (the lab's boards: %s, and their numbered hosts)", name, strings.Join(lab.Kinds(), ", "))
		case kind != "usb-ssd" && kind != "nvme":
			return nil, usage.Errorf("--storage %q: a host's card is always there; the drive beside it is usb-ssd or nvme", part)
		}
		if _, err := lab.StorageFor(b, kind); err != nil {
			return nil, usage.Errorf("--storage: %w", err)
		}
		out[name] = kind
	}
	return out, nil
}

// labUpFlags sets what `lab up`'s flags ask of the lab: each host's
// cooling, CPU speed, latency, drive and release, the hosts without vcgencmd, and
// how fast simulated time runs.
func labUpFlags(c *cli.Context, l *lab.Lab) error {
	var err error
	if l.Cooling, err = perHost[lab.Cooling]("--cooling", c.String("cooling"), "case or fan", "case", oneOf(lab.Coolings()...)); err != nil {
		return err
	}
	if l.CPU, err = perHost[string]("--cpu", c.String("cpu"), "board or full", "board", oneOf(lab.CPUBoard, lab.CPUFull)); err != nil {
		return err
	}
	if l.Latency, err = perHost[string]("--latency", c.String("latency"), "a round trip like 20ms (0: none)", "20ms", roundTrip); err != nil {
		return err
	}
	if l.Drives, err = drivesFlag(c.String("storage")); err != nil {
		return err
	}
	if l.Releases, err = perHost[string]("--release", c.String("release"), strings.Join(lab.ReleaseNames(), " or "), lab.DefaultRelease, oneOf(lab.ReleaseNames()...)); err != nil {
		return err
	}
	l.NoVcgencmd = map[string]bool{}
	if v := strings.TrimSpace(c.String("without-vcgencmd")); v != "" {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if _, ok := lab.BoardNamed(name); !ok {
				return usage.Errorf("--without-vcgencmd: no lab host %q (the lab's boards: %s, and their numbered hosts)", name, strings.Join(lab.Kinds(), ", "))
			}
			l.NoVcgencmd[name] = true
		}
	}
	if l.ThermalSpeed = c.Float64("thermal-speed"); l.ThermalSpeed <= 0 || l.ThermalSpeed > 1000 {
		return usage.Errorf("--thermal-speed %g: want more than 0, at most 1000", l.ThermalSpeed)
	}
	return nil
}
