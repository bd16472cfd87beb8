package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"pidb/results"
	"pidb/validate"
)

// Reading is a run in a few sentences: its verdict with the reasons, then
// the biggest thing in its charts (how throughput moved and why, how hot
// the CPU got) and any errors.
func Reading(r results.Run) []string {
	var out []string
	if v := r.Verdict; v != nil {
		if len(v.Reasons) == 0 {
			out = append(out, string(v.Verdict)+": every check passed.")
		} else {
			msgs := make([]string, 0, len(v.Reasons))
			for _, x := range v.Reasons {
				msgs = append(msgs, x.Message)
			}
			out = append(out, string(v.Verdict)+": "+strings.Join(msgs, "; ")+".")
		}
	}
	h := heatOf(r)
	first, last := validate.Quarters(r.Series)
	switch change := pct(first, last); {
	case first <= 0:
		out = append(out, "No throughput was measured.")
	case change <= -10:
		s := fmt.Sprintf("Throughput fell %.0f%% from the first quarter of the run (%.1f TPS) to the last (%.1f TPS)", -change, first, last)
		switch {
		case h.limitAt != nil && *h.limitAt >= 0:
			s += fmt.Sprintf(" as the CPU passed %d C, %s into the run", limitC, seconds(*h.limitAt))
		case h.minMHz != nil && *h.minMHz < 0.95*h.topMHz:
			s += fmt.Sprintf(" as the Arm clock fell from %.0f to %.0f MHz", h.topMHz, *h.minMHz)
		case h.minMHz != nil:
			s += ", with the Arm clock at full speed: not the heat (a busy controller, a slow card or a growing table does this)"
		}
		out = append(out, s+".")
	case change >= 10:
		out = append(out, fmt.Sprintf("Throughput rose %.0f%% from the first quarter of the run (%.1f TPS) to the last (%.1f TPS): the run had not reached a steady state; a longer warm-up would show whether it does.", change, first, last))
	default:
		out = append(out, fmt.Sprintf("Throughput held steady: the last quarter's %.1f TPS is within %.0f%% of the first quarter's %.1f.", last, math.Max(math.Abs(change), 1), first))
	}
	if h.maxC != nil {
		if *h.maxC >= limitC {
			out = append(out, fmt.Sprintf("The CPU reached %.1f C, past the %d C where the firmware slows the cores.", *h.maxC, limitC))
		} else {
			out = append(out, fmt.Sprintf("The CPU peaked at %.1f C, %.0f C below the %d C limit.", *h.maxC, limitC-*h.maxC, limitC))
		}
	} else {
		out = append(out, "No temperature was read (the host has no thermal zone pidb can read).")
	}
	if n := errorCount(r.Summary.Errors); n > 0 {
		kinds := make([]string, 0, len(r.Summary.Errors))
		for k, v := range r.Summary.Errors {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(kinds)
		out = append(out, fmt.Sprintf("%d transactions failed (%s).", n, strings.Join(kinds, ", ")))
	}
	return out
}

func errorCount(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// pct is the change from a to b in percent; 0 when a is 0.
func pct(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return 100 * (b - a) / a
}

// seconds is a time offset as people say it: 45s, 2m10s.
func seconds(s float64) string {
	n := int(math.Round(s))
	if n < 60 {
		return fmt.Sprintf("%ds", n)
	}
	if n%60 == 0 {
		return fmt.Sprintf("%dm", n/60)
	}
	return fmt.Sprintf("%dm%02ds", n/60, n%60)
}
