package lab

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// allHosts is the Cooling key for every host not named.
const allHosts = "*"

// SetThermal sets the simulation from `lab up`'s flags: cooling is "case"
// or "fan" for every host, or NAME=case,NAME=fan; without lists the hosts
// left without vcgencmd; speed is simulated seconds per real second. Its
// errors are the flags' mistakes.
func (l *Lab) SetThermal(cooling, without string, speed float64) error {
	known := func(name string) bool { _, ok := BoardNamed(name); return ok }
	l.Cooling, l.NoVcgencmd = map[string]string{}, map[string]bool{}
	if v := strings.TrimSpace(cooling); v != "" {
		for _, part := range strings.Split(v, ",") {
			name, c, named := strings.Cut(strings.TrimSpace(part), "=")
			if !named {
				name, c = allHosts, name
			}
			if c != "case" && c != "fan" {
				return fmt.Errorf("--cooling %q: want case or fan, for all hosts or as NAME=case", part)
			}
			if named && !known(name) {
				return fmt.Errorf("--cooling: no lab host %q (the lab's boards: %s, and their numbered hosts)", name, strings.Join(kinds(), ", "))
			}
			l.Cooling[name] = c
		}
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
	}
	return nil
}
