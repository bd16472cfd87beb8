package lab

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"
)

// TestLatencyOfAHost: a host's own round trip, else the lab's, else none.
func TestLatencyOfAHost(t *testing.T) {
	cfg := ThermalConfig{Latency: map[string]string{AllHosts: "20ms", "pi3": "0s"}}
	if cfg.latency("pi4-2") != 20*time.Millisecond || cfg.latency("pi3") != 0 {
		t.Errorf("a host without its own: %v; pi3 at 0: %v", cfg.latency("pi4-2"), cfg.latency("pi3"))
	}
	if none := (ThermalConfig{}); none.latency("pi4") != 0 {
		t.Errorf("a new lab: %v", none.latency("pi4"))
	}
}

// pipeThrough starts an echo server on loopback and a listener whose
// connections delayPipe joins to it, each way d, and returns a client
// connection through the two.
func pipeThrough(t *testing.T, d time.Duration) *net.TCPConn {
	t.Helper()
	echo, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	front, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	go func() {
		c, err := front.Accept()
		if err != nil {
			return
		}
		h, err := net.Dial("tcp4", echo.Addr().String())
		if err != nil {
			c.Close()
			return
		}
		delayPipe(c.(*net.TCPConn), h.(*net.TCPConn), d)
	}()
	c, err := net.Dial("tcp4", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// TestDelayPipeHoldsEachWay: through the link a request's answer comes
// back no sooner than the round trip (a lower bound, which a busy machine
// cannot break), every byte of a megabyte comes back in order, and a half
// close reaches the other side, whose close comes back as the end.
func TestDelayPipeHoldsEachWay(t *testing.T) {
	const oneWay = 30 * time.Millisecond
	c := pipeThrough(t, oneWay)
	buf := make([]byte, 4)
	for i := 0; i < 3; i++ {
		began := time.Now()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "ping" {
			t.Fatalf("echo: %q %v", buf, err)
		}
		if rtt := time.Since(began); rtt < 2*oneWay {
			t.Errorf("a round trip through the link took %v, less than its %v", rtt, 2*oneWay)
		}
	}
	data := make([]byte, 1<<20)
	_, _ = rand.Read(data)
	go func() {
		_, _ = c.Write(data)
		_ = c.CloseWrite()
	}()
	back, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, data) {
		t.Errorf("%d bytes came back of %d, or not in order", len(back), len(data))
	}
}
