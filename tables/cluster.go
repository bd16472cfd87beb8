package tables

import (
	"fmt"
	"strconv"

	"pidb/action"
	"pidb/cluster"
	"pidb/job"
)

// ClusterStatus is `pidb cluster status`'s table: each cluster's primary,
// then its replicas, with how far behind each is (the primary's WAL it
// has not replayed, on MariaDB its transactions, and in seconds) and the WAL the primary keeps for it
// (its slot); "-" for what is not known.
func ClusterStatus(sts []cluster.Status) Table {
	t := Table{Header: []string{"CLUSTER", "HOST", "ROLE", "STATE", "LAG", "LAG_S", "SYNC", "WAL_KEPT", "WHY"}}
	for _, st := range sts {
		t.Rows = append(t.Rows, []string{st.Cluster, st.Primary.Host, "primary", st.Primary.State, "", "", "", "", st.Primary.Error})
		for _, r := range st.Replicas {
			lag := bytesOr(r.LagBytes)
			if r.LagTransactions != nil {
				lag = fmt.Sprintf("%d trx", *r.LagTransactions)
			}
			t.Rows = append(t.Rows, []string{st.Cluster, r.Host, "replica", r.State, lag, numOr(r.LagS, "%.1f"), dashIfNil(r.Sync), bytesOr(r.RetainedBytes), r.Error})
		}
	}
	return t
}

// bytesOr is a size as people read it: B, kB, MB, GB (binary); "-" for
// none.
func bytesOr(b *uint64) string {
	switch {
	case b == nil:
		return "-"
	case *b < 1<<10:
		return fmt.Sprintf("%d B", *b)
	case *b < 1<<20:
		return fmt.Sprintf("%.1f kB", float64(*b)/(1<<10))
	case *b < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(*b)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(*b)/(1<<30))
}

// dashIfNil is *s, "-" for nil or "".
func dashIfNil(s *string) string {
	if s == nil {
		return "-"
	}
	return dashIf(*s)
}

// dashIf is s, "-" for "".
func dashIf(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Switchover is `pidb cluster switchover`'s table: each step, done or (a
// dry run) to be done.
func Switchover(r action.SwitchoverResult) Table {
	t := Table{Header: []string{"CLUSTER", "FROM", "TO", "STEP"}}
	for _, s := range r.Steps {
		if r.DryRun {
			s = "would " + s
		}
		t.Rows = append(t.Rows, []string{r.Cluster, r.From, r.To, s})
	}
	return t
}

// ReplicaLag is `pidb bench --cluster`'s table for a workload that writes
// on the primary: how far behind it each replica was through the run.
func ReplicaLag(js []job.BenchResult) Table {
	t := Table{Header: []string{"REPLICA", "OF", "READINGS", "MAX_LAG", "MAX_LAG_S", "NOT_CONNECTED"}}
	for _, b := range js {
		for _, r := range b.Replicas {
			most := r.MaxBytes
			lag := bytesOr(&most)
			if r.MaxTransactions != nil {
				lag = fmt.Sprintf("%d trx", *r.MaxTransactions)
			}
			t.Rows = append(t.Rows, []string{r.Host, b.Host, strconv.Itoa(r.Readings), lag, fmt.Sprintf("%.1f", r.MaxS), strconv.Itoa(r.NotConnected)})
		}
	}
	return t
}
