package tune

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"pidb/dbms"
	"pidb/units"
)

// Kind is the type of a setting's value.
type Kind int

// The kinds of setting values.
const (
	Bytes    Kind = iota // a size, rendered in the server's units
	Int                  // a plain integer
	Float                // a decimal number
	Bool                 // on or off
	Enum                 // one of a list of words
	Duration             // a time, rendered in PostgreSQL's units
	Quoted               // a string of names (textChars), quoted where the server wants it
)

func (k Kind) String() string {
	return [...]string{"size", "integer", "number", "boolean", "word", "time", "text"}[k]
}

// Value is a typed setting value.
type Value struct {
	Kind  Kind
	Bytes uint64
	Int   int64
	Float float64
	Bool  bool
	Word  string // Enum's and Quoted's
	Dur   time.Duration
}

// Size, Integer, Number, Switch, Word and Time make values.
func Size(b uint64) Value        { return Value{Kind: Bytes, Bytes: b} }
func Integer(n int64) Value      { return Value{Kind: Int, Int: n} }
func Number(f float64) Value     { return Value{Kind: Float, Float: f} }
func Switch(on bool) Value       { return Value{Kind: Bool, Bool: on} }
func Word(w string) Value        { return Value{Kind: Enum, Word: w} }
func Time(d time.Duration) Value { return Value{Kind: Duration, Dur: d} }

// Text makes a Quoted value: s must hold only textChars.
func Text(s string) Value { return Value{Kind: Quoted, Word: s} }

// textChars are what a Quoted value may hold: names, spaces and the
// punctuation of a list such as PostgreSQL's synchronous_standby_names
// (ANY 1 ("pi3", "pi5")) and of MySQL's plugin_load_add
// (semisync_source.so;semisync_replica.so); never a quote that would end the value, a
// newline or a comment.
const textChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _.,;()*\"-"

func isMySQLFamily(flavor dbms.Flavor) bool { return flavor.Family() == dbms.MySQLFamily }

// Render writes the value as the flavour's configuration file wants it:
// PostgreSQL sizes as kB/MB/GB/TB and switches as on/off; MySQL and MariaDB
// sizes as K/M/G and switches as ON/OFF.
func (v Value) Render(flavor dbms.Flavor) string {
	my := isMySQLFamily(flavor)
	switch v.Kind {
	case Bytes:
		units := []struct {
			pg, my string
			n      uint64
		}{{"TB", "T", 1 << 40}, {"GB", "G", 1 << 30}, {"MB", "M", 1 << 20}, {"kB", "K", 1 << 10}}
		for _, u := range units {
			if v.Bytes >= u.n && v.Bytes%u.n == 0 {
				if my {
					return strconv.FormatUint(v.Bytes/u.n, 10) + u.my
				}
				return strconv.FormatUint(v.Bytes/u.n, 10) + u.pg
			}
		}
		if my {
			return strconv.FormatUint(v.Bytes, 10)
		}
		// PostgreSQL's smallest memory unit is kB
		return strconv.FormatUint((v.Bytes+1023)/1024, 10) + "kB"
	case Int:
		return strconv.FormatInt(v.Int, 10)
	case Float:
		return strconv.FormatFloat(v.Float, 'f', -1, 64)
	case Bool:
		switch {
		case my && v.Bool:
			return "ON"
		case my:
			return "OFF"
		case v.Bool:
			return "on"
		default:
			return "off"
		}
	case Enum:
		return v.Word
	case Quoted:
		if my {
			return v.Word
		}
		return "'" + v.Word + "'"
	case Duration:
		for _, u := range []struct {
			s string
			d time.Duration
		}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"min", time.Minute}, {"s", time.Second}} {
			if v.Dur >= u.d && v.Dur%u.d == 0 {
				return strconv.FormatInt(int64(v.Dur/u.d), 10) + u.s
			}
		}
		return strconv.FormatInt(v.Dur.Milliseconds(), 10) + "ms"
	}
	return ""
}

// parse reads a value of the parameter's kind from an override, checking
// its range. Sizes are binary; times take PostgreSQL's units.
func (p Param) parse(s string) (Value, error) {
	s = strings.TrimSpace(s)
	switch p.Kind {
	case Bytes:
		n, err := units.ParseSize(s)
		if err != nil {
			return Value{}, err
		}
		if slices.Equal(p.Flavors, []dbms.Flavor{dbms.Postgres}) {
			// PostgreSQL reads a bare number in the setting's own unit
			// (8kB blocks for shared_buffers, kB for work_mem), and has
			// no unit below kB: pidb does not guess at either
			if _, bare := strconv.ParseUint(s, 10, 64); bare == nil {
				return Value{}, fmt.Errorf("%s has no unit, and PostgreSQL would read it in the setting's own unit (8kB blocks for some): write it with one, like 1GB or 512MB", s)
			}
			if n%1024 != 0 {
				return Value{}, fmt.Errorf("%s is not a whole number of kB, PostgreSQL's smallest memory unit", s)
			}
		}
		if n < p.MinBytes || (p.MaxBytes > 0 && n > p.MaxBytes) {
			return Value{}, fmt.Errorf("%s is out of range %s-%s", s, Size(p.MinBytes).Render(dbms.Postgres), Size(p.MaxBytes).Render(dbms.Postgres))
		}
		return Size(n), nil
	case Int:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("%q is not a whole number", s)
		}
		if float64(n) < p.Min || float64(n) > p.Max {
			return Value{}, fmt.Errorf("%d is out of range %v-%v", n, p.Min, p.Max)
		}
		return Integer(n), nil
	case Float:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return Value{}, fmt.Errorf("%q is not a number", s)
		}
		if f < p.Min || f > p.Max {
			return Value{}, fmt.Errorf("%v is out of range %v-%v", f, p.Min, p.Max)
		}
		return Number(f), nil
	case Bool:
		switch strings.ToLower(s) {
		case "on", "true", "yes", "1":
			return Switch(true), nil
		case "off", "false", "no", "0":
			return Switch(false), nil
		}
		return Value{}, fmt.Errorf("%q is not on or off", s)
	case Enum:
		for _, w := range p.Enum {
			if strings.EqualFold(s, w) {
				return Word(w), nil
			}
		}
		return Value{}, fmt.Errorf("%q is not one of %s", s, strings.Join(p.Enum, ", "))
	case Duration:
		d, err := parsePGDuration(s)
		if err != nil {
			return Value{}, err
		}
		if d < time.Duration(p.Min)*time.Millisecond || (p.Max > 0 && d > time.Duration(p.Max)*time.Millisecond) {
			return Value{}, fmt.Errorf("%s is out of range", s)
		}
		return Time(d), nil
	case Quoted:
		if i := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune(textChars, r) }); i >= 0 {
			return Value{}, fmt.Errorf("%q holds %q: want names, spaces and , ( ) * \" . _ - only", s, s[i:i+1])
		}
		return Text(s), nil
	}
	return Value{}, fmt.Errorf("unknown kind")
}

// parsePGDuration reads a time as PostgreSQL writes one: "200ms", "30s",
// "5min", "1h", "1d".
func parsePGDuration(s string) (time.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || i == 0 {
		return 0, fmt.Errorf("%q is not a time like \"30s\" or \"5min\"", s)
	}
	unit := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[strings.TrimSpace(s[i:])]
	if unit == 0 {
		return 0, fmt.Errorf("%q is not a time like \"30s\" or \"5min\" (units: ms, s, min, h, d)", s)
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("%q is too long", s)
	}
	return time.Duration(n) * unit, nil
}

// Article is the kind with its article, for sentences: "an integer".
func (k Kind) Article() string {
	if k == Int {
		return "an " + k.String()
	}
	return "a " + k.String()
}
