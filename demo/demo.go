// Package demo is `pidb demo`: the whole job on the simulated Pi lab, as
// the first write-up told it. The lab comes up with three boards (a Pi 4B,
// a Pi 3B and a Pi Zero W, with fans); pidb provisions them at the lab
// machine's full speed and validates all three at their boards' speed
// (lab up --cpu); the Pi 4 goes into a case without a fan and is validated alone:
// it throttles, sags and FAILs; it gets its fan back and is validated
// again (PASS); the two runs are compared; and the report of it all is
// written. It calls the same use cases as the commands (package action).
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"pidb/action"
	"pidb/config"
	"pidb/job"
	"pidb/lab"
	"pidb/progress"
	"pidb/report"
)

// Options are the demo's settings; the zero value of each is its default.
type Options struct {
	LabDir       string        // the lab's state; default lab.DefaultDir
	Out          string        // the runs and the report go here; default "pidb-demo"
	Duration     time.Duration // each validation's measured time; default 1m
	Warmup       time.Duration // default 5s
	Idle         time.Duration // the idle readings before and after each load; default 15s
	ThermalSpeed float64       // simulated seconds per real second; default 10
	Keep         bool          // leave the lab up at the end
	Log          io.Writer     // progress: the story's steps and the lab's
	// View shows each host's lines during the fleet's runs; default plain
	// lines on Log
	View    *progress.View
	Version string // pidb's, saved with the runs
}

// Defaults of the demo: a few minutes on a 2-core machine once the lab's
// base image and packages are cached.
const (
	DefaultOut          = "pidb-demo"
	DefaultDuration     = time.Minute
	DefaultWarmup       = 5 * time.Second
	DefaultIdle         = 15 * time.Second
	DefaultThermalSpeed = 10
)

// The lab's Pi 4, the one that goes into a case and then gets a fan.
const pi4 = "pi4"

// clientCores is about what the workload's client takes of this
// machine's cores beside a Pi 4 at full load.
const clientCores = 0.5

// Result is what the demo found.
type Result struct {
	Report      string             // the page's path
	Comparison  *report.Comparison // the Pi 4 in a case (base) against with a fan
	Validations []Validation       // every validation, in the story's order
	Inventory   string             // the lab's inventory
	KeptUp      bool               // the lab is still up
	SSH         string             // how to log in to a simulated Pi, when it is
}

// Validation is one host's validation in the story, and how it was cooled.
type Validation struct {
	job.ValidateResult
	Cooling lab.Cooling
	Speed   string // the lab's CPU speed for the host: lab.CPUBoard or lab.CPUFull
}

// Run tells the story. The lab comes down at the end unless Keep is set or
// it was up before the demo started.
func Run(ctx context.Context, o Options) (Result, error) {
	o = o.withDefaults()
	var res Result
	l := lab.New(o.LabDir, o.Log).Own()
	wasUp := false
	for _, s := range l.Status() {
		wasUp = wasUp || s.State == "up"
	}
	st := story{log: o.Log, total: 6}

	var fleetNames []string
	for _, b := range l.Fleet {
		fleetNames = append(fleetNames, b.Name)
	}
	// each host's CPU speed as the demo found it, which a lab that was up
	// before gets back at the end
	speeds := map[string]string{}
	for _, n := range fleetNames {
		speeds[n] = l.Speed(n)
	}
	// speed sets the three hosts' CPU speed (lab up --cpu NAME=...)
	speed := func(s string) error {
		l.CPU = map[string]string{}
		for _, n := range fleetNames {
			l.CPU[n] = s
		}
		_, err := l.Up(ctx, fleetNames)
		return err
	}

	st.step("the lab: three simulated Pis, the first write-up's desk (a Pi 4B 4 GB, a Pi 3B and a Pi Zero W, with fans), simulated time %gx, at this machine's full speed while pidb installs (a Zero W at its board's speed would take as long as a Zero W)", o.ThermalSpeed)
	l.Cooling, l.ThermalSpeed = map[string]lab.Cooling{lab.AllHosts: lab.CoolingFan}, o.ThermalSpeed
	if err := speed(lab.CPUFull); err != nil {
		return res, fmt.Errorf("lab up: %w", err)
	}
	res.Inventory = l.InventoryPath()
	keep := o.Keep || wasUp
	if !keep {
		defer func() {
			st.note("taking the lab down (--keep leaves it up)")
			if err := l.Down(context.WithoutCancel(ctx)); err != nil {
				st.note("lab down: " + err.Error())
			}
		}()
	} else if wasUp {
		defer func() {
			l.CPU = speeds
			if _, err := l.Up(context.WithoutCancel(ctx), fleetNames); err != nil {
				st.note("the hosts' CPU speeds as they were: " + err.Error())
			}
		}()
	}
	// the three it brought up: the lab's inventory has every host that is
	// up, other boards someone booted beside them too
	fl := action.Fleet{Inventory: res.Inventory, Limit: strings.Join(fleetNames, ","), View: o.View, ConnectTimeout: 20 * time.Second}

	st.step("provision: install the database (PostgreSQL on the Pi 4 and the Zero, MariaDB on the Pi 3), tune it to the board's RAM, turn the desktop off, open the port to the lab's subnet only")
	if _, err := action.Provision(ctx, action.ProvisionOptions{Fleet: fl, ProvisionOptions: job.ProvisionOptions{Steps: job.AllSteps}}); err != nil {
		return res, fmt.Errorf("provision: %w", err)
	}

	// a reading every 15 simulated seconds, as the write-up logged, but no
	// more than one a second
	interval := max(time.Second, time.Duration(float64(15*time.Second)/o.ThermalSpeed).Round(100*time.Millisecond))
	work := action.Workload{
		Bench:   config.Values{"duration": o.Duration, "warmup": o.Warmup},
		Thermal: config.Values{"interval": interval, "idle_before": o.Idle, "idle_after": o.Idle},
	}
	// validateAll validates hosts (names) at once, or concurrency at a
	// time: a host that FAILs is a result, not the demo's error
	validateAll := func(names []string, pi4Cooling lab.Cooling, concurrency int) ([]job.ValidateResult, error) {
		f := fl
		f.Limit, f.Concurrency = strings.Join(names, ","), concurrency
		vs, err := action.Validate(ctx, action.ValidateOptions{Fleet: f, Workload: work, Out: filepath.Join(o.Out, "runs"), Version: o.Version})
		var verdicts *action.Verdicts
		if errors.As(err, &verdicts) {
			err = nil
		}
		for _, r := range vs {
			v := Validation{ValidateResult: r, Cooling: lab.CoolingFan, Speed: l.Speed(r.Host)}
			if r.Host == pi4 {
				v.Cooling = pi4Cooling
			}
			res.Validations = append(res.Validations, v)
		}
		return vs, err
	}

	// the figures at each board's speed: its published CPU capacity as a
	// quota. One host at a time where this machine cannot give all three
	// theirs at once, as the write-up ran each Pi on its own
	need, have, err := l.BoardCores(ctx, fleetNames)
	if err != nil {
		return res, err
	}
	alone := need > float64(have)
	how := "at once"
	if alone {
		how = fmt.Sprintf("one at a time (at their boards' speed the three need %.1f cores, this machine has %d)", need, have)
	}
	st.step("validate all three, with fans, at their boards' speed (each board's published CPU capacity as a CPU quota), %s: each one's baseline workload for %s with the temperature read every %s, %s idle before and after", how, o.Duration, interval, o.Idle)
	if err := speed(lab.CPUBoard); err != nil {
		return res, fmt.Errorf("lab up --cpu board: %w", err)
	}
	concurrency := len(fleetNames)
	if alone {
		concurrency = 1
	}
	first, err := validateAll(fleetNames, lab.CoolingFan, concurrency)
	if err != nil {
		return res, fmt.Errorf("validate: %w", err)
	}
	for _, v := range first {
		st.note(fmt.Sprintf("%s: %s, %.1f TPS", v.Host, v.Verdict, v.TPS))
	}
	cooled := func(cooling lab.Cooling) error {
		l.Cooling = map[string]lab.Cooling{pi4: cooling}
		if _, err := l.Up(ctx, []string{pi4}); err != nil {
			return fmt.Errorf("lab up: %w", err)
		}
		return nil
	}

	// the Pi 4's throttling costs it throughput only where this machine
	// can give it its board's speed beside the client (about half a
	// core); else its throttled quota is about what it gets anyway, and
	// the case and the fan are compared at this machine's full speed
	pi4Need, _, err := l.BoardCores(ctx, []string{pi4})
	if err != nil {
		return res, err
	}
	at := "at its board's speed"
	if pi4Need+clientCores > float64(have) {
		at = fmt.Sprintf("at this machine's full speed (at board speed a Pi 4 needs %.1f cores and the client about %.1f, more than this machine's %d: there its throttled quota would be about what it gets anyway)", pi4Need, clientCores, have)
		l.CPU = map[string]string{pi4: lab.CPUFull}
	}

	st.step("the first write-up's finding: the Pi 4 goes into a case without a fan, and is validated alone, %s", at)
	if err := cooled(lab.CoolingCase); err != nil {
		return res, err
	}
	inCase, err := validateAll([]string{pi4}, lab.CoolingCase, 1)
	if err != nil {
		return res, fmt.Errorf("validate: %w", err)
	}
	st.note(fmt.Sprintf("%s in a case: %s, %.1f TPS", pi4, inCase[0].Verdict, inCase[0].TPS))

	st.step("the Pi 4 gets its fan back, and is validated again")
	if err := cooled(lab.CoolingFan); err != nil {
		return res, err
	}
	withFan, err := validateAll([]string{pi4}, lab.CoolingFan, 1)
	if err != nil {
		return res, fmt.Errorf("validate: %w", err)
	}
	st.note(fmt.Sprintf("%s with a fan: %s, %.1f TPS", pi4, withFan[0].Verdict, withFan[0].TPS))
	caseRun, fanRun := inCase[0].RunDir, withFan[0].RunDir
	if caseRun == "" || fanRun == "" {
		return res, errors.New("the Pi 4's runs were not saved")
	}

	st.step("the report: the fleet, and the Pi 4 in a case compared with the Pi 4 with a fan")
	pair, err := report.Open([]string{caseRun, fanRun})
	if err != nil {
		return res, err
	}
	// the fleet as validated together, at their boards' speed
	var fleetDirs []string
	for _, v := range first {
		fleetDirs = append(fleetDirs, v.RunDir)
	}
	fleetRuns, err := report.Open(fleetDirs)
	if err != nil {
		return res, err
	}
	rep, err := report.Build(report.Input{Runs: report.NewestPerHost(fleetRuns), Compare: pair, Source: "pidb demo", Version: o.Version, Now: time.Now()})
	if err != nil {
		return res, err
	}
	res.Report = filepath.Join(o.Out, "report.html")
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return res, err
	}
	if err := rep.WriteFile(res.Report); err != nil {
		return res, err
	}
	res.Comparison = rep.Comparison
	if keep {
		b, _ := lab.BoardNamed(pi4)
		res.KeptUp = true
		res.SSH = fmt.Sprintf("ssh -o StrictHostKeyChecking=yes -o UserKnownHostsFile=%s -i %s pi@%s", l.KnownHostsPath(), l.KeyPath(), lab.Address(b))
	}
	return res, nil
}

func (o Options) withDefaults() Options {
	if o.LabDir == "" {
		o.LabDir = lab.DefaultDir
	}
	if o.Out == "" {
		o.Out = DefaultOut
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Warmup == 0 {
		o.Warmup = DefaultWarmup
	}
	if o.Idle == 0 {
		o.Idle = DefaultIdle
	}
	if o.ThermalSpeed == 0 {
		o.ThermalSpeed = DefaultThermalSpeed
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.View == nil {
		o.View = progress.New(o.Log, progress.Options{})
	}
	return o
}

// story prints where the demo is: "== 3/6 validate all three ...".
type story struct {
	log      io.Writer
	n, total int
}

func (s *story) step(format string, args ...any) {
	s.n++
	fmt.Fprintf(s.log, "\n== %d/%d %s\n", s.n, s.total, fmt.Sprintf(format, args...))
}

func (s *story) note(msg string) { fmt.Fprintf(s.log, "   %s\n", msg) }
