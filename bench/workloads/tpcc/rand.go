package tpcc

import "math/rand/v2"

// The standard's sizes (TPC-C 1.3, clause 4.3), as sysbench-tpcc has them.
const (
	Items                 = 100000
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	// the orders a district starts with; the last 900 are new (undelivered)
	initialOrders    = 3000
	firstNewOrder    = 2101
	maxOrderLines    = 15
	customersByName  = 1000 // c_id 1..1000 get the 1,000 last names in order
	lastNameCount    = 1000
	cLoad255         = 157 // C of NURand(255, ...) when the last names were loaded (clause 2.1.6.1)
	bcCreditPercent  = 10
	remoteItemPerMil = 10 // 1% of order lines come from another warehouse
)

// syllables make a customer's last name from a number 0..999 (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// AppendLastName appends the last name of n (0..999): its three digits'
// syllables, BARBARBAR for 0 and EINGEINGEING for 999.
func AppendLastName(b []byte, n int) []byte {
	return append(append(append(b, syllables[n/100]...), syllables[n/10%10]...), syllables[n%10]...)
}

// LastName is AppendLastName as a string.
func LastName(n int) string { return string(AppendLastName(nil, n)) }

// Constants are NURand's C for each A (clause 2.1.6): one set per run.
type Constants struct{ C255, C1023, C8191 int64 }

// RunConstants draws a run's C values. C for A = 255 (the last names) must
// differ from the one the data was loaded with (cLoad255, pidb's and the
// standard's fixed choice here) by 65..119, but not 96 or 112 (clause
// 2.1.6.1), so that a run does not look up the names in the order they
// were loaded.
func RunConstants(r *rand.Rand) Constants {
	c := Constants{C1023: r.Int64N(1024), C8191: r.Int64N(8192)}
	for {
		c.C255 = r.Int64N(256)
		if ValidRunC255(c.C255) {
			return c
		}
	}
}

// ValidRunC255 reports whether a run's C for A = 255 keeps the standard's
// distance from the load's (clause 2.1.6.1).
func ValidRunC255(c int64) bool {
	d := c - cLoad255
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

// NURand is the standard's non-uniform random number in [x, y] (clause
// 2.1.6): (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func NURand(r *rand.Rand, a, c, x, y int64) int64 {
	return (((uniform(r, 0, a) | uniform(r, x, y)) + c) % (y - x + 1)) + x
}

// uniform is a number in [lo, hi], each as likely.
func uniform(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int64N(hi-lo+1) }

// appendLetters appends n random lower-case letters (sysbench's "@").
func appendLetters(b []byte, r *rand.Rand, n int) []byte {
	for range n {
		b = append(b, byte('a'+r.IntN(26)))
	}
	return b
}

// appendDigits appends n random digits (sysbench's "#").
func appendDigits(b []byte, r *rand.Rand, n int) []byte {
	for range n {
		b = append(b, byte('0'+r.IntN(10)))
	}
	return b
}
