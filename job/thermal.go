package job

import (
	"context"
	"time"

	"pidb/facts"
	"pidb/inventory"
	"pidb/progress"
	"pidb/thermal"
)

// Watch reads a host's temperature, clock and throttling flags: once when
// duration is zero, else every interval for duration (`pidb thermal`).
// Each reading also goes to record (the CSV), when it is set; a failed
// reading is reported and sampling goes on.
func Watch(ctx context.Context, h inventory.Host, c Conn, interval, duration time.Duration, record func(thermal.Reading) error, r progress.Reporter) ([]thermal.Reading, error) {
	r.Step("gathering facts")
	f, err := facts.Collect(ctx, c.User, h)
	if err != nil {
		return nil, err
	}
	s := &thermal.Sampler{R: c.User, Model: f.Model}
	var out []thermal.Reading
	var sampleErr error
	take := func(rd thermal.Reading, err error) {
		if err != nil {
			sampleErr = err
			r.Note("reading failed: " + err.Error())
			return
		}
		out = append(out, rd)
		r.Status(thermal.Describe(rd))
		if record != nil {
			if err := record(rd); err != nil && sampleErr == nil {
				sampleErr = err
			}
		}
	}
	start := time.Now()
	// the first reading whatever the duration: on a busy link one may take
	// longer than a short watch lasts
	take(s.Sample(ctx))
	if duration > 0 {
		runCtx, cancel := context.WithDeadline(ctx, start.Add(duration))
		defer cancel()
		select {
		case <-runCtx.Done():
		case <-time.After(time.Until(start.Add(interval))):
			s.Run(runCtx, interval, take)
		}
	}
	if len(out) == 0 && sampleErr != nil {
		return nil, sampleErr
	}
	return out, ctx.Err()
}
