package thermal

import (
	"math"
	"testing"
)

// FuzzParseThrottled: get_throttled's answer is read or refused, never a
// panic, and what is read prints back as vcgencmd writes it and reads
// again to the same flags.
func FuzzParseThrottled(f *testing.F) {
	for _, s := range []string{"throttled=0x0", "throttled=0x50005\n", "throttled=0xe0000", "0x80008", "throttled=", "throttled=0x", "throttled=0xffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseThrottled(s)
		if err != nil {
			return
		}
		again, err := ParseThrottled("throttled=" + fl.String())
		if err != nil || again != fl {
			t.Fatalf("%q read as %s, which reads back as %s (%v)", s, fl, again, err)
		}
	})
}

// FuzzParse: a sample's output is read as far as it makes sense, never a
// panic: a temperature is a number or unknown (NaN), a clock not negative.
func FuzzParse(f *testing.F) {
	f.Add("temp=55017\nclock=frequency(48)=1500398464\nthrottled=throttled=0x0\ncpufreq=1500000\n")
	f.Add("temp=\ncpufreq=600000\n")
	f.Add("temp=-1\nclock=frequency(0)=\nthrottled=garbage\n")
	f.Fuzz(func(t *testing.T, out string) {
		r := Parse(out)
		if math.IsInf(r.TempC, 0) || r.ArmHz < 0 {
			t.Fatalf("%q: %+v", out, r)
		}
	})
}
