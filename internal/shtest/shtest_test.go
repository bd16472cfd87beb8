package shtest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors a check reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// The check fails a builder that splices a value into a script's text,
// whichever way it quotes it, and passes one that takes it as data; the
// stubs record each word as it was, newlines and all, and who ran it.
func TestCheckCatchesSplicing(t *testing.T) {
	sb := New(t)
	spliced := map[string]func(v string) string{
		"bare":          func(v string) string { return "touch " + v },
		"double quotes": func(v string) string { return `touch "` + v + `"` },
		"single quotes": func(v string) string { return `touch '` + v + `'` },
		"a message":     func(v string) string { return `rm x || echo "could not: ` + v + `"` },
	}
	for name, build := range spliced {
		caught := 0
		for _, v := range Hostile("/srv/x") {
			sb.Fail("rm")
			rec := &recorder{TB: t}
			sb.Run(build(v), "").Check(rec, name, "", v)
			if len(rec.errs) > 0 {
				caught++
			}
		}
		if caught == 0 {
			t.Errorf("%s: no hostile value caught", name)
		}
	}
	sb.Fail()
	for _, v := range Hostile("/srv/x") {
		rec := &recorder{TB: t}
		r := sb.Run(`runuser -u postgres -- sh -c 'touch -- "$1"' sh "$1"`, "", v)
		r.Check(rec, "as data", "", v)
		if len(rec.errs) > 0 || len(r.Calls) != 2 || r.Calls[1].As != "postgres" || r.Calls[1].Args[1] != v {
			t.Errorf("%q taken as data: %v %v", v, rec.errs, r.Calls)
		}
	}
	// an option where options go is caught
	rec := &recorder{TB: t}
	sb.Run(`touch "$1"`, "", Option).Check(rec, "an option", "", Option)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "taken as an option") {
		t.Errorf("an option: %v", rec.errs)
	}
}
