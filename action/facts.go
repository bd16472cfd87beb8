package action

import (
	"context"

	"pidb/facts"
	"pidb/inventory"
	"pidb/job"
	"pidb/progress"
)

// FactsOptions are `pidb facts`'s.
type FactsOptions struct {
	Fleet
}

// HostFacts is one host's facts, or its error.
type HostFacts = Result[facts.Facts]

// Facts gathers what each host is: model, RAM, OS, storage, engine.
func Facts(ctx context.Context, o FactsOptions) ([]HostFacts, error) {
	_, hosts, err := o.load()
	if err != nil {
		return nil, err
	}
	res, err := each(ctx, o.Fleet, hosts, func(ctx context.Context, h inventory.Host, c job.Conn, r progress.Reporter) (facts.Facts, error) {
		r.Step("gathering facts")
		return facts.Collect(ctx, c.User, h)
	})
	if err != nil {
		return nil, err
	}
	return res, Err(res)
}
