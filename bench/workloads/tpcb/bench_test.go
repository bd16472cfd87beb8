package tpcb

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"pidb/bench/wire/pgwire"
	"pidb/internal/wiretest"
)

func msg(typ byte, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return append(b, body...)
}

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
			reply := append(msg('C', "UPDATE 1\x00"), msg('Z', "T")...)
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
