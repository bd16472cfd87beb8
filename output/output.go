// Package output writes pidb's results: aligned tables for people and JSON
// documents for programs. Progress and logs never go through it; they go to
// stderr.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"pidb/progress"
)

// Grid is a table's header and its rows, as Table writes them.
type Grid struct {
	Header []string
	Rows   [][]string
}

// Table writes rows under a header as aligned columns. Empty cells print
// "-". The cells hold what hosts said (facts, live settings, errors):
// they are sanitized (progress.Sanitize) before the columns are laid out;
// with paint, the verdicts are coloured after that (Paint), in pidb's own
// colours.
func Table(w io.Writer, header []string, rows [][]string, paint bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			if c == "" {
				c = "-"
			}
			cells[i] = progress.Sanitize(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	text := b.String()
	if paint {
		text = Paint(text)
	}
	_, err := io.WriteString(w, text)
	return err
}

// JSON writes v as one indented JSON document followed by a newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// verdicts are the words Paint colours, and their ANSI colours.
var verdicts = regexp.MustCompile(`\b(PASS|WARN|FAIL|FAILED|DOWN)\b`)

// Paint colours the verdicts in text that was laid out without colour
// (a table): PASS green, WARN yellow, FAIL, FAILED and DOWN red. The
// colour codes take no room on a terminal, so the columns stay aligned.
func Paint(text string) string {
	return verdicts.ReplaceAllStringFunc(text, func(w string) string {
		code := "31"
		switch w {
		case "PASS":
			code = "32"
		case "WARN":
			code = "33"
		}
		return "\x1b[" + code + "m" + w + "\x1b[0m"
	})
}
