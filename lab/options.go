package lab

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// allHosts is the Cooling key for every host not named.
const allHosts = "*"

// SetCPU sets, from `lab up --cpu`, the CPU speed of the hosts the next Up
// boots or finds up: CPUBoard or CPUFull for all of them (and, kept in
// the lab, for the hosts booted later), or NAME=board,NAME=full. Empty
// leaves each host at the speed it had (board speed in a new lab). Its
// errors are the flag's mistakes.
func (l *Lab) SetCPU(spec string) error {
	m, err := perHost("--cpu", spec, CPUBoard, CPUFull)
	l.CPU = m
	return err
}

// perHost reads a flag that gives every host one of values, or some hosts
// each one: "fan", or "pi4=case,zero=fan"; every host is allHosts's key.
func perHost(flag, spec string, values ...string) (map[string]string, error) {
	return perHostWith(flag, spec, strings.Join(values, " or "), values[0], func(v string) (string, bool) {
		return v, slices.Contains(values, v)
	})
}

// perHostWith reads a flag as perHost does, each value as check reads it
// (the value to keep, and whether it is one); want says what is, and
// example is one.
func perHostWith(flag, spec, want, example string, check func(string) (string, bool)) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	for _, part := range strings.Split(spec, ",") {
		name, v, named := strings.Cut(strings.TrimSpace(part), "=")
		if !named {
			name, v = allHosts, name
		}
		kept, ok := check(strings.TrimSpace(v))
		if !ok {
			return nil, fmt.Errorf("%s %q: want %s, for all hosts or as NAME=%s", flag, part, want, example)
		}
		if _, ok := BoardNamed(name); named && !ok {
			return nil, fmt.Errorf("%s: no lab host %q (the lab's boards: %s, and their numbered hosts)", flag, name, strings.Join(kinds(), ", "))
		}
		out[name] = kept
	}
	return out, nil
}

// SetThermal sets the simulation from `lab up`'s flags: cooling is "case"
// or "fan" for every host, or NAME=case,NAME=fan; without lists the hosts
// left without vcgencmd; speed is simulated seconds per real second. Its
// errors are the flags' mistakes.
func (l *Lab) SetThermal(cooling, without string, speed float64) error {
	known := func(name string) bool { _, ok := BoardNamed(name); return ok }
	l.NoVcgencmd = map[string]bool{}
	var err error
	if l.Cooling, err = perHost("--cooling", cooling, "case", "fan"); err != nil {
		return err
	}
	if v := strings.TrimSpace(without); v != "" {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if !known(name) {
				return fmt.Errorf("--without-vcgencmd: no lab host %q (the lab's boards: %s, and their numbered hosts)", name, strings.Join(kinds(), ", "))
			}
			l.NoVcgencmd[name] = true
		}
	}
	if l.ThermalSpeed = speed; l.ThermalSpeed <= 0 || l.ThermalSpeed > 1000 {
		return fmt.Errorf("--thermal-speed %g: want more than 0, at most 1000", l.ThermalSpeed)
	}
	if l.ThermalSpeed != 1 {
		fmt.Fprintf(l.Log, "lab: simulated time runs %gx faster than real time: heat builds up in 1/%g of the time it takes on a Pi\n", l.ThermalSpeed, l.ThermalSpeed)
	}
	// the simulator runs as `pidb lab simulate`; a Go test binary cannot
	if exe, err := os.Executable(); err == nil && !testing.Testing() {
		l.SimulatorCommand = []string{exe, "lab", "simulate", "--dir", l.Dir}
		l.LinkCommand = []string{exe, "lab", "link", "--dir", l.Dir}
	}
	return nil
}
