//go:build !linux

package bench

import (
	"context"
	"time"
)

const canMultiplex = false

// group is never called without epoll: multiplexed returns no groups.
func group(context.Context, Workload, []int, []Worker, []*stats, time.Time, *lockedHist) {}
