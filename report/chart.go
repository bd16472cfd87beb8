package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A chart is drawn by gonum/plot: a panel is one plot (lines over bands),
// a figure one or more panels stacked on the same time axis.

// line is one series of a panel.
type line struct {
	name   string
	xy     plotter.XYs
	color  color.Color
	dashed bool
	steps  bool // drawn as steps (a histogram's bars)
	// below, when set, is the line under this one: the area between
	// them is filled with its colour (a stacked chart's layer)
	below plotter.XYs
}

// band is a shaded span of the x axis: the idle time, a throttled span.
type band struct {
	from, to float64
	color    color.Color
	label    string // in the legend, once per label
}

// panel is one plot.
type panel struct {
	title, x, y string
	lines       []line
	bands       []band
	limit       *float64 // a dashed horizontal line: the 80 C limit
	limitLabel  string
	logX        bool
	yFromZero   bool
}

// Figure is a chart of the page: its panels stacked, one over the other.
type Figure struct {
	ID      string // the element's id, and the PNG's name
	Title   string
	Caption string
	panels  []panel
	height  vg.Length // per panel
	Series  []string  // the names of its lines, for the tests and the alt text
	SVG     []byte
}

// colours: a palette that stays apart in print and for most colour-blind
// readers (Okabe and Ito's).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{0, 0, 0, 255},       // black
}

func colour(i int) color.Color { return palette[i%len(palette)] }

var (
	idleColour      = color.RGBA{225, 225, 225, 255}
	throttledColour = color.RGBA{250, 200, 200, 255}
	limitColour     = color.RGBA{200, 0, 0, 255}
)

const figureWidth = 18 * vg.Centimeter

// sans is the plot's text in Liberation Sans, which gonum/plot carries.
func sans(p *plot.Plot) {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	p.Title.TextStyle.Font = font.From(f, 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(f, 10)
		a.Tick.Label.Font = font.From(f, 9)
	}
	p.Legend.TextStyle.Font = font.From(f, 9)
}

// plainTicks are gonum/plot's ticks with their labels as people write
// numbers: 2500, not 2500.00.
var plainTicks = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ts {
		if t.Label != "" {
			ts[i].Label = strconv.FormatFloat(t.Value, 'g', 6, 64)
		}
	}
	return ts
})

// plot draws the panel.
func (pn panel) plot() (*plot.Plot, error) {
	p := plot.New()
	sans(p)
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = pn.title, pn.x, pn.y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.ThumbnailWidth = 0.6 * vg.Centimeter
	p.Y.Tick.Marker = plainTicks
	p.X.Tick.Marker = plainTicks
	if pn.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	// the data's range, then room above it for the legend
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range pn.lines {
		for _, pt := range l.xy {
			xmin, xmax = math.Min(xmin, pt.X), math.Max(xmax, pt.X)
			ymin, ymax = math.Min(ymin, pt.Y), math.Max(ymax, pt.Y)
		}
	}
	for _, b := range pn.bands {
		xmin, xmax = math.Min(xmin, b.from), math.Max(xmax, b.to)
	}
	if pn.limit != nil {
		ymin, ymax = math.Min(ymin, *pn.limit), math.Max(ymax, *pn.limit)
	}
	if math.IsInf(xmin, 1) {
		return nil, fmt.Errorf("%s: nothing to draw", pn.title)
	}
	if pn.yFromZero {
		ymin = math.Min(0, ymin)
	}
	if ymax == ymin {
		ymax = ymin + 1
	}
	entries := len(pn.lines) + len(pn.bands)
	if pn.limit != nil {
		entries++
	}
	ymax += (ymax - ymin) * (0.1 + 0.07*float64(min(entries, 6)))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax

	labelled := map[string]bool{}
	for _, b := range pn.bands {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: b.from, Y: ymin}, {X: b.to, Y: ymin}, {X: b.to, Y: ymax}, {X: b.from, Y: ymax}})
		if err != nil {
			return nil, err
		}
		poly.Color, poly.LineStyle.Width = b.color, 0
		p.Add(poly)
		if b.label != "" && !labelled[b.label] {
			labelled[b.label] = true
			p.Legend.Add(b.label, poly)
		}
	}
	if pn.limit != nil {
		lim, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: *pn.limit}, {X: xmax, Y: *pn.limit}})
		if err != nil {
			return nil, err
		}
		lim.Color, lim.Dashes, lim.Width = limitColour, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1)
		p.Add(lim)
		p.Legend.Add(pn.limitLabel, lim)
	}
	for _, l := range pn.lines {
		if l.below == nil || len(l.xy) == 0 {
			continue
		}
		// the layer: along the line, back along the one under it
		area := append(plotter.XYs{}, l.xy...)
		for i := len(l.below) - 1; i >= 0; i-- {
			area = append(area, l.below[i])
		}
		poly, err := plotter.NewPolygon(area)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", pn.title, l.name, err)
		}
		r, g, b, _ := l.color.RGBA()
		poly.Color, poly.LineStyle.Width = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 90}, 0
		p.Add(poly)
	}
	for _, l := range pn.lines {
		if len(l.xy) == 0 {
			continue
		}
		pl, err := plotter.NewLine(l.xy)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", pn.title, l.name, err)
		}
		pl.Color, pl.Width = l.color, vg.Points(1.5)
		if len(l.xy) <= 12 && !l.steps { // few points: each one shown
			pts, err := plotter.NewScatter(l.xy)
			if err != nil {
				return nil, err
			}
			pts.Color, pts.Radius, pts.Shape = l.color, vg.Points(2.5), draw.CircleGlyph{}
			p.Add(pts)
		}
		if l.dashed {
			pl.Dashes = []vg.Length{vg.Points(5), vg.Points(2)}
		}
		if l.steps {
			pl.StepStyle = plotter.PreStep
		}
		p.Add(pl)
		p.Legend.Add(l.name, pl)
	}
	return p, nil
}

// draw draws the figure's panels on a canvas, one over the other.
func (f *Figure) draw(c vg.CanvasSizer) error {
	plots := make([][]*plot.Plot, len(f.panels))
	for i, pn := range f.panels {
		p, err := pn.plot()
		if err != nil {
			return err
		}
		plots[i] = []*plot.Plot{p}
	}
	dc := draw.New(c)
	cells := plot.Align(plots, draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadY: vg.Points(10), PadLeft: vg.Points(4), PadRight: vg.Points(8)}, dc)
	for i := range plots {
		plots[i][0].Draw(cells[i][0])
	}
	return nil
}

func (f *Figure) size() (vg.Length, vg.Length) {
	h := f.height
	if h == 0 {
		h = 7.5 * vg.Centimeter
	}
	return figureWidth, h * vg.Length(len(f.panels))
}

// svgSize is the fixed size gonum/plot writes on the <svg> element; the
// page lets the viewBox scale it to the width it has instead.
var svgSize = regexp.MustCompile(`^<svg width="[^"]*" height="[^"]*"`)

// render draws the figure to SVG for the page, without the XML prologue
// and with no fixed size.
func (f *Figure) render() error {
	w, h := f.size()
	c := vgsvg.New(w, h)
	if err := f.draw(c); err != nil {
		return err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	out := b.Bytes()
	if i := bytes.Index(out, []byte("<svg ")); i >= 0 {
		out = out[i:]
	}
	title := fmt.Sprintf(`<svg role="img" aria-label="%s" width="100%%" preserveAspectRatio="xMidYMid meet"`, html.EscapeString(f.Title))
	f.SVG = svgSize.ReplaceAll(out, []byte(title))
	return nil
}

// PNG draws the figure as a PNG image.
func (f *Figure) PNG() ([]byte, error) {
	w, h := f.size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144), vgimg.UseBackgroundColor(color.White))
	if err := f.draw(c); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
