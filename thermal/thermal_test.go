package thermal

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"reflect"
	"testing"
	"time"

	"pidb/remote"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		in    string
		names []string
	}{
		{"throttled=0x0", []string{}},
		{"throttled=0x1", []string{"under_voltage"}},
		{"throttled=0x2", []string{"freq_capped"}},
		{"throttled=0x4", []string{"throttled"}},
		{"throttled=0x8", []string{"soft_temp_limit"}},
		{"throttled=0x10000", []string{"under_voltage_since_boot"}},
		{"throttled=0x20000", []string{"freq_capped_since_boot"}},
		{"throttled=0x40000", []string{"throttled_since_boot"}},
		{"throttled=0x80000", []string{"soft_temp_limit_since_boot"}},
		// throttled now and since boot, under-voltage since boot: a hot Pi 4 on a weak supply
		{"throttled=0x50005", []string{"under_voltage", "throttled", "under_voltage_since_boot", "throttled_since_boot"}},
		{"throttled=0xe0000\n", []string{"freq_capped_since_boot", "throttled_since_boot", "soft_temp_limit_since_boot"}},
		{"0x6", []string{"freq_capped", "throttled"}},
	} {
		f, err := ParseThrottled(tc.in)
		if err != nil || !reflect.DeepEqual(f.Names(), tc.names) {
			t.Errorf("%q: %v %v, want %v", tc.in, f.Names(), err, tc.names)
		}
	}
	for _, bad := range []string{"", "throttled=", "throttled=50005", "error=1 error_msg=\"Command not registered\""} {
		if _, err := ParseThrottled(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if s := Flags(0x50005).String(); s != "0x50005" {
		t.Errorf("String: %s", s)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		temp      float64
		hz        int64
		flags     Flags
		known     bool
	}{
		{"Raspberry Pi OS", "temp=86744\nclock=frequency(48)=1000000000\nthrottled=throttled=0x60006\ncpufreq=1000000\n", 86.744, 1000000000, 0x60006, true},
		{"Ubuntu, no vcgencmd", "temp=52150\ncpufreq=1500000\n", 52.15, 1500000000, 0, false},
		{"vcgencmd refused (not in the video group)", "temp=45277\nclock=\nthrottled=\ncpufreq=\n", 45.277, 0, 0, false},
		{"no sensor at all", "temp=\ncpufreq=\n", math.NaN(), 0, 0, false},
	} {
		r := Parse(tc.out)
		if !(r.TempC == tc.temp || math.IsNaN(r.TempC) && math.IsNaN(tc.temp)) || r.ArmHz != tc.hz || r.Throttled != tc.flags || r.ThrottledKnown != tc.known {
			t.Errorf("%s: %+v", tc.name, r)
		}
	}
}

func TestCSV(t *testing.T) {
	at := time.Date(2026, 11, 30, 2, 50, 15, 0, time.FixedZone("CET", 3600))
	var b bytes.Buffer
	err := WriteCSV(&b,
		Reading{Host: "pi4", At: at, TempC: 86.744, ArmHz: 1000000000, Throttled: 0x60006, ThrottledKnown: true},
		Reading{Host: "ubuntu", At: at, TempC: 52.15, ArmHz: 1500000000},
		Reading{Host: "zero", At: at, TempC: math.NaN()})
	want := "pi4, 20261130-01:50:15, 86744, 1000000000, 0x60006\n" +
		"ubuntu, 20261130-01:50:15, 52150, 1500000000, \n" +
		"zero, 20261130-01:50:15, , , \n"
	if err != nil || b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// canned answers the sample command; it is for the command's output only:
// the script runs for real on the lab in cmd/pidb's tests.
type canned struct {
	out  string
	runs int
}

func (c *canned) Run(_ context.Context, cmd string) (remote.Result, error) {
	c.runs++
	return remote.Result{Stdout: []byte(c.out)}, nil
}
func (c *canned) RunInput(ctx context.Context, cmd string, _ []byte) (remote.Result, error) {
	return c.Run(ctx, cmd)
}
func (c *canned) Upload(context.Context, string, []byte, fs.FileMode) error { return nil }
func (c *canned) ReadFile(context.Context, string) ([]byte, error)          { return nil, nil }
func (c *canned) Host() string                                              { return "zero" }

func TestSamplerOnAZero(t *testing.T) {
	c := &canned{out: "temp=40000\nclock=frequency(48)=1000000000\nthrottled=throttled=0x50005\n"}
	s := &Sampler{R: c, Model: "Raspberry Pi Zero W Rev 1.1"}
	r, err := s.Sample(context.Background())
	if err != nil || r.Host != "zero" || r.UnderVoltageKnown || r.Throttled != Throttled|ThrottledSinceBoot {
		t.Errorf("%+v %v: a Zero's under-voltage flags must be unknown, the rest kept", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	n := 0
	s.Run(ctx, 100*time.Millisecond, func(Reading, error) { n++ })
	if n < 2 || n > 4 {
		t.Errorf("%d samples in 250 ms at 100 ms", n)
	}
}
