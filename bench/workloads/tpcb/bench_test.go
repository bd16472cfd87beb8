package tpcb

import (
	"context"
	"math/rand/v2"
	"testing"

	"pidb/bench/wire/pgwire"
	"pidb/internal/wiretest"
)

// canned answers every read with the same reply and forgets what is written.
type canned struct {
	wiretest.Trickle
	reply []byte
}

func (c *canned) Read(b []byte) (int, error)  { return copy(b, c.reply), nil }
func (c *canned) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkTransaction is the client's own work for one TPC-B-like
// transaction (7 statements built, sent and their answers parsed), without
// the network: what is left of its CPU once the system calls are paid.
func BenchmarkTransaction(b *testing.B) {
	for _, proto := range []string{"simple", "prepared"} {
		b.Run(proto, func(b *testing.B) {
			reply := append(wiretest.PGMessage('C', "UPDATE 1\x00"), wiretest.PGMessage('Z', "T")...)
			wk := &worker{w: pgwire.New(&canned{reply: reply}, 'I'), prepared: proto == "prepared", rnd: newRand(1),
				nb: 10, nt: 100, na: 1000000, maxTry: 10, buf: make([]byte, 0, 256)}
			b.ReportAllocs()
			for b.Loop() {
				if out, err := wk.Do(context.Background()); err != nil || out.Queries != 7 {
					b.Fatal(out, err)
				}
			}
		})
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }
