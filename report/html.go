package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"pidb/results"
)

// WriteHTML writes the report as one self-contained page: the charts are
// inline SVG, the style is in the page, nothing is fetched and no script
// runs.
func (r *Report) WriteHTML(w io.Writer) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"svg":     func(f *Figure) template.HTML { return template.HTML(f.SVG) }, // drawn by gonum/plot, which escapes its text
		"num":     func(format string, v float64) string { return fmt.Sprintf(format, v) },
		"opt":     optNum,
		"mb":      func(b uint64) string { return fmt.Sprintf("%d MB", b>>20) },
		"kib":     func(b int) string { return fmt.Sprintf("%d KiB", b>>10) },
		"yesno":   yesNo,
		"lower":   strings.ToLower,
		"reasons": reasonCodes,
		"value":   value,
		"version": func(r Row) string { return strings.TrimSpace(r.Engine + " " + r.EngineVersion) },
		"seconds": seconds,
		"inc":     func(i int) int { return i + 1 },
		"change":  changeClass,
	}).Parse(page)
	if err != nil {
		return err
	}
	return t.Execute(w, r)
}

func optNum(format string, v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf(format, *v)
}

func yesNo(b *bool) string {
	switch {
	case b == nil:
		return "unknown"
	case *b:
		return "yes"
	}
	return "no"
}

func reasonCodes(rs []results.Reason) string { return strings.Join(results.Codes(rs), ", ") }

func changeClass(c Change) string {
	switch {
	case !c.Significant:
		return "same"
	case c.Better:
		return "better"
	}
	return "worse"
}

const page = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>pidb report{{with .Source}}: {{.}}{{end}}</title>
<style>
:root { color-scheme: light; }
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 0 auto; padding: 1rem; max-width: 72rem; color: #1a1a1a; line-height: 1.45; }
h1 { font-size: 1.6rem; margin: 0.2rem 0; }
h2 { font-size: 1.3rem; margin-top: 2.2rem; border-bottom: 2px solid #0072b2; padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin-top: 1.6rem; }
p.meta { color: #555; margin-top: 0; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: 0.9rem; margin: 0.5rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f0f4f8; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.PASS { background: #d8f3dc; font-weight: bold; }
.WARN { background: #fff3bf; font-weight: bold; }
.FAIL { background: #ffd6d6; font-weight: bold; }
.better { background: #d8f3dc; font-weight: bold; }
.worse { background: #ffd6d6; font-weight: bold; }
.same { color: #555; }
figure { margin: 1rem 0; break-inside: avoid; page-break-inside: avoid; }
figure svg { display: block; width: 100%; height: auto; max-width: 60rem; }
figcaption { font-size: 0.85rem; color: #444; }
ul.reading li { margin: 0.2rem 0; }
.caution { border-left: 4px solid #e69f00; background: #fff8e6; padding: 0.4rem 0.8rem; }
.note { color: #555; font-style: italic; }
nav ul { padding-left: 1.2rem; }
details summary { cursor: pointer; }
@media print { body { max-width: none; padding: 0; } h2 { break-after: avoid; } .scroll { overflow: visible; } }
</style>
</head>
<body>
<header>
<h1>pidb report</h1>
<p class="meta">{{.Count}}{{with .Source}} from {{.}}{{end}} · made {{.Generated.UTC.Format "2006-01-02 15:04 UTC"}}{{with .Version}} by pidb {{.}}{{end}}</p>
</header>
<nav><ul>
{{if .Rows}}<li><a href="#fleet">The fleet</a></li>{{end}}
{{if .Comparison}}<li><a href="#comparison">Comparison</a></li>{{end}}
{{range .Hosts}}<li><a href="#{{.Row.Anchor}}">{{.Label}}</a>: {{with .Row.Verdict}}{{.}}, {{end}}{{num "%.1f" .Row.TPS}} TPS</li>{{end}}
</ul></nav>

{{if .Rows}}
<section id="fleet">
<h2>The fleet</h2>
<div class="scroll"><table id="fleet-table">
<thead><tr><th>host</th><th>verdict</th><th>workload</th><th>engine</th><th>TPS</th><th>QPS</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>highest C</th><th>lowest MHz</th><th>throttled</th><th>reasons</th><th>clients</th><th>board</th><th>RAM</th><th>cores</th><th>storage</th><th>OS</th><th>preset</th></tr></thead>
<tbody>
{{range .Rows}}<tr data-host="{{.Host}}">
<td><a href="#{{.Anchor}}">{{.Host}}</a></td><td class="{{.Verdict}}" data-col="verdict">{{if .Verdict}}{{.Verdict}}{{else}}bench{{end}}</td>
<td data-col="workload">{{.Workload}}{{with .Script}} {{.}}{{end}}{{if .TpmC}}, {{num "%.0f" .TpmC}} tpmC{{end}}</td><td data-col="engine">{{version .}}</td>
<td class="n" data-col="tps">{{num "%.1f" .TPS}}</td><td class="n">{{num "%.1f" .QPS}}</td>
<td class="n">{{num "%.2f" .P50Ms}}</td><td class="n" data-col="p95">{{num "%.2f" .P95Ms}}</td><td class="n">{{num "%.2f" .P99Ms}}</td>
<td class="n" data-col="max_temp">{{opt "%.1f" .MaxTempC}}</td><td class="n">{{opt "%.0f" .MinArmMHz}}</td><td>{{yesno .Throttled}}</td><td>{{reasons .Reasons}}</td>
<td class="n">{{.Clients}}</td><td data-col="board">{{.Model}}{{with .Simulated}} <span class="note">(simulated, {{.}} speed)</span>{{end}}</td><td class="n">{{mb .RAMBytes}}</td><td class="n">{{.CPUs}}</td><td>{{.Storage}}</td><td>{{.OS}}</td><td>{{.Preset}}</td>
</tr>
{{end}}</tbody></table></div>
{{if .Simulated}}<p class="note" id="simulated">The boards marked simulated are pidb's lab: containers on one machine that show a Pi's /proc, RAM and heat. At board speed each gets its board's published CPU capacity (7-Zip's benchmark, sbc-bench) as a CPU quota, so its figures follow the board's; at full speed it has the lab machine's processor, shared, and its figures say nothing of a Pi's. Each has a card of its own, a file on the lab machine's disk: at board speed limited to its kind's published reads and writes (an A1 or A2 card, a USB SSD), at full speed as fast as that disk.</p>{{end}}
{{with .Unlike}}<p class="caution" id="unlike">{{.}}</p>{{end}}
{{range .Fleet}}<figure id="chart-{{.ID}}" data-series="{{range $i, $s := .Series}}{{if $i}}|{{end}}{{$s}}{{end}}">{{svg .}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
</section>
{{end}}

{{with .Comparison}}
<section id="comparison">
<h2>Comparison</h2>
<p>{{index .Labels 0}} is the base{{range $i, $l := .Labels}}{{if $i}}; {{$l}} is compared with it{{end}}{{end}}. A change smaller than the runs' own noise (the spread of their 10-second means, at least 1%; 5 C for temperature, 5% for the clock) is shown as no change.</p>
{{range .Cautions}}<p class="caution">{{.}}</p>{{end}}
<div class="scroll"><table id="compare-table">
<thead><tr><th></th>{{range $i, $l := .Labels}}<th>{{$l}}{{if not $i}} (base){{end}}</th>{{if $i}}<th>change</th>{{end}}{{end}}</tr></thead>
<tbody>
{{range .Metrics}}{{$m := .}}<tr data-metric="{{.Name}}"><th>{{.Name}}</th><td class="n">{{value (index .Values 0) .Unit}}</td>
{{range $i, $c := .Changes}}<td class="n">{{value (index $m.Values (inc $i)) $m.Unit}}</td><td class="{{change $c}}" data-change="{{num "%.1f" $c.Pct}}">{{$c.Text}}</td>{{end}}</tr>
{{end}}
{{range .Settings}}<tr data-setting="{{.Name}}"><th>{{.Name}}</th>{{range $i, $v := .Values}}<td>{{$v}}</td>{{if $i}}<td class="worse">changed</td>{{end}}{{end}}</tr>
{{end}}</tbody></table></div>
{{range .Figures}}<figure id="chart-{{.ID}}" data-series="{{range $i, $s := .Series}}{{if $i}}|{{end}}{{$s}}{{end}}">{{svg .}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
</section>
{{end}}

{{range .Hosts}}
<section id="{{.Row.Anchor}}">
<h2>{{.Label}}{{with .Row.Verdict}}: <span class="{{.}}">{{.}}</span>{{end}}</h2>
<p class="meta">{{.Row.Kind}} run {{.Row.RunID}} · {{.Row.Workload}}{{with .Row.Script}} {{.}}{{end}} on {{version .Row}}, {{.Row.Clients}} clients for {{seconds .Row.DurationS}}{{with .Row.Preset}} · preset {{.}}{{end}}{{with .Row.PidbVersion}} · pidb {{.}}{{end}}</p>
<ul class="reading">{{range .Reading}}<li>{{.}}</li>{{end}}</ul>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
{{range .Figures}}<figure id="chart-{{.ID}}" data-series="{{range $i, $s := .Series}}{{if $i}}|{{end}}{{$s}}{{end}}">{{svg .}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}
{{if .Settings}}<h3>Settings it ran with</h3>
<div class="scroll"><table class="settings">
<thead><tr><th>setting</th><th>live</th><th>the tuner's</th><th>why</th></tr></thead>
<tbody>{{range .Settings}}<tr><td>{{.Name}}</td><td>{{.Value}}</td><td>{{.Tuned}}</td><td>{{.Why}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{with .Facts}}<h3>The facts it was judged on</h3>
<div class="scroll"><table class="facts"><tbody>
<tr><th>board</th><td>{{.Model}} (revision {{.Revision}})</td></tr>
<tr><th>RAM</th><td>{{mb .RAMBytes}} ({{mb .MemBytes}} usable)</td></tr>
<tr><th>cores</th><td>{{.CPUs}} ({{.Arch}}{{if .PageSize}}, {{kib .PageSize}} pages{{end}})</td></tr>
<tr><th>storage</th><td>{{.Storage}}</td></tr>
<tr><th>OS</th><td>{{.OS.ID}} {{.OS.VersionID}} {{.OS.Codename}}</td></tr>
<tr><th>boots to</th><td>{{.BootTarget}}</td></tr>
<tr><th>sensors</th><td>thermal zone: {{if .Thermal}}yes{{else}}no{{end}}; vcgencmd: {{if .Vcgencmd}}yes{{else}}no{{end}}</td></tr>
<tr><th>engine</th><td>{{.Engine.Flavor}} {{.Engine.Version}}</td></tr>
</tbody></table></div>{{end}}
</section>
{{end}}
<footer><p class="meta">Made by pidb from the saved runs' run.json; series.csv and thermal.csv beside each hold the same numbers.</p></footer>
</body>
</html>
`
