package inventory

import (
	"fmt"
	"time"

	"pidb/dbms"
)

// Kind is the type of a settings key's value.
type Kind int

// The kinds of value a settings key holds.
const (
	String   Kind = iota // a string, maybe one of a list
	Int                  // a whole number in a range
	Number               // a number in a range
	Bool                 // true or false
	Duration             // a length of time, "90s"
)

// Rule is what one key of a settings section ([bench] and [host.bench],
// [thermal], [validate]) may hold. Package config declares each key once,
// with its rule, and gives the declaration to Load (the Sections option);
// the same rule checks the flag that overrides the key.
type Rule struct {
	Kind     Kind
	Min, Max float64            // Int and Number: the range, both ends in it
	ZeroOK   bool               // Duration: no time ("0") is allowed too
	OneOf    []string           // String: the values allowed; none: any
	Valid    func(string) error // String: a check of its own (tpcc's mix)
	// Path says a String is a file's path: the inventory makes a relative
	// one absolute against its own folder (and ~ the home folder) before
	// Valid reads it
	Path bool
	// Fits is nil when a host of the engine family can take the value (a
	// workload that runs on it), else why not: checked for each host on
	// its [bench] with its [host.bench] over it, at the value's line.
	Fits func(engine dbms.Family, value string) error
}

// Check reads v against the rule: v as TOML decodes it (int64, float64,
// string for a duration), or as a flag holds it (int, time.Duration). What
// it returns says what is wrong and what is wanted, without the key's name.
func (r Rule) Check(v any) error {
	switch r.Kind {
	case String:
		s, err := str(v)
		if err != nil {
			return err
		}
		if len(r.OneOf) > 0 {
			return oneOf(r.OneOf...)(s)
		}
		if r.Valid != nil {
			return r.Valid(s)
		}
		return nil
	case Int:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case int:
			n = int64(x)
		default:
			return fmt.Errorf("want a whole number, not %s", tomlType(v))
		}
		return intIn(int64(r.Min), int64(r.Max))(n)
	case Number:
		if n, ok := v.(int); ok {
			v = int64(n)
		}
		return numberIn(r.Min, r.Max)(v)
	case Bool:
		return isBool(v)
	case Duration:
		d, ok := v.(time.Duration)
		if !ok {
			if r.ZeroOK {
				return isZeroOrDuration(v)
			}
			return isDuration(v)
		}
		switch {
		case d < 0 || d == 0 && !r.ZeroOK:
			want := "more than zero"
			if r.ZeroOK {
				want = "zero or more"
			}
			return fmt.Errorf("want %s, not %s", want, d)
		}
		return nil
	}
	return fmt.Errorf("no rule for kind %d", r.Kind)
}

// Sections declares the keys of the settings sections by section ("bench",
// "thermal", "validate") and key: package config's declaration. Without
// it, those sections take any key, and config refuses an unknown one when
// a command reads it.
func Sections(keys map[string]map[string]Rule) Option {
	return func(p *parser) { p.sections = keys }
}

// fits checks a host's [bench] (its [host.bench] over it) against the
// rules that depend on the host's engine (Rule.Fits).
func (p *parser) fits(h Host) {
	for _, k := range h.Bench.Keys() {
		r, ok := p.sections["bench"][k]
		v, isString := h.Bench[k].Raw.(string)
		if !ok || r.Fits == nil || !isString {
			continue
		}
		if err := r.Fits(h.Engine, v); err != nil {
			p.errs = append(p.errs, &Error{File: p.file, Line: h.Bench[k].Line, Msg: fmt.Sprintf("host %q: bench.%s: %v", h.Name, k, err)})
		}
	}
}

// sectionKeys is the schema of a settings section.
func (p *parser) sectionKeys(section string) table {
	t := table{}
	for k, r := range p.sections[section] {
		t[k] = r.Check
	}
	return t
}
