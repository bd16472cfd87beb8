package action

import (
	"context"
	"os"
	"sync"
	"time"

	"pidb/config"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
	"pidb/thermal"
	"pidb/usage"
)

// ThermalOptions are `pidb thermal`'s.
type ThermalOptions struct {
	Fleet
	// Thermal overrides the inventory's [thermal] (its interval), by key.
	Thermal  config.Values
	Duration time.Duration // keep reading this long; 0: one reading
	// CSVFile gets every reading in the first write-up's format; "": none.
	CSVFile string
}

// Thermal reads each host's temperature, Arm clock and throttling flags,
// once or for Duration, and sums each host's readings up.
func Thermal(ctx context.Context, o ThermalOptions) ([]thermal.Summary, error) {
	inv, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	tc, err := config.ThermalFor(inv, config.ForBench, o.Thermal)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	if o.Duration < 0 {
		return nil, usage.Errorf("a watch of %s: want zero (one reading) or more", o.Duration)
	}
	var record func(thermal.Reading) error
	if o.CSVFile != "" {
		if err := outputFile("--csv", o.CSVFile); err != nil {
			return nil, err
		}
		f, err := os.Create(o.CSVFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var mu sync.Mutex // every host's goroutine writes to the one file
		record = func(r thermal.Reading) error {
			mu.Lock()
			defer mu.Unlock()
			return thermal.WriteCSV(f, r)
		}
	}
	res, err := each(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) ([]thermal.Reading, error) {
		return job.Watch(ctx, h, c, tc.Interval, o.Duration, record, r)
	})
	if err != nil {
		return nil, err
	}
	out := make([]thermal.Summary, 0, len(res))
	for _, r := range res {
		s := thermal.Summarize(r.Host.Name, r.Value)
		if r.Err != nil {
			s.Error = r.Err.Error()
		}
		out = append(out, s)
	}
	return out, Err(res)
}
