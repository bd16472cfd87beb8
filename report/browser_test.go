package report

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"pidb/results"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is Debian's browser, which scripts/deps.sh installs; without it
// the browser tests skip, and fail under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium under CI=true: scripts/deps.sh installs it")
	}
	t.Skip("no chromium: apt-get install chromium to run the browser tests")
	return ""
}

// TestReportInABrowser opens the demo's report in headless chromium: no
// console errors, a screenshot that is not blank, and every chart's SVG
// drawn with paths; at a phone's width nothing but the tables' boxes is
// wider than the screen. With -update the first screen is kept as
// docs/report.png for the README.
func TestReportInABrowser(t *testing.T) {
	exe := chromium(t)
	rep := demoReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := rep.WriteFile(page); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1100, 1400))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	listen := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				problems = append(problems, fmt.Sprintf("console %s", e.Type))
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				problems = append(problems, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(listen))
	defer cancel()
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	type chart struct {
		ID    string `json:"id"`
		Paths int    `json:"paths"`
		Width int    `json:"width"`
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("footer")); err != nil {
		t.Fatal(err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]chart](`[...document.querySelectorAll("figure")].map(f => ({id: f.id, paths: f.querySelectorAll("svg path").length, width: Math.round(f.querySelector("svg").getBoundingClientRect().width)}))`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the first screen: the README's picture
	if err != nil {
		t.Fatal(err)
	}
	// the workload and the engine are in sight without scrolling the table
	engineSeen, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const th = [...document.querySelectorAll("#fleet-table th")].find(x => x.textContent == "engine");
		return th.getBoundingClientRect().right <= th.closest(".scroll").getBoundingClientRect().right })()`))
	if err != nil {
		t.Fatal(err)
	}
	if !engineSeen {
		t.Error("the fleet table's engine column is scrolled out of sight")
	}
	// a page of one host's two runs: each reached from the navigation
	d := demoRuns(t)
	two := []results.Listed{d["pi4 case"], d["pi4 fan"]}
	pair, err := Build(Input{Runs: two, Compare: two, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	pairPage := filepath.Join(dir, "pair.html")
	if err := pair.WriteFile(pairPage); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+pairPage), chromedp.WaitReady("footer")); err != nil {
		t.Fatal(err)
	}
	type reached struct {
		Header   string   `json:"header"`
		Sections []string `json:"sections"`
		Missing  []string `json:"missing"`
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[reached](`({header: document.querySelector("header .meta").textContent,
		sections: [...document.querySelectorAll("section[id^=run-]")].map(s => s.id),
		missing: [...document.querySelectorAll("nav a, #fleet-table a")].map(a => a.getAttribute("href")).filter(h => !document.querySelector(h))})`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got.Header, "2 runs of 1 host") || len(got.Sections) != 2 || got.Sections[0] == got.Sections[1] || len(got.Missing) != 0 {
		t.Errorf("one host's two runs: header %q, sections %q, links to nothing %q", got.Header, got.Sections, got.Missing)
	}
	// a phone's width: nothing wider than the screen but the tables, which scroll in their boxes
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("footer"), chromedp.EmulateViewport(390, 800)); err != nil {
		t.Fatal(err)
	}
	overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("the browser reported: %s", strings.Join(problems, "; "))
	}
	mu.Unlock()
	if want := len(rep.Figures()); len(charts) != want {
		t.Errorf("%d figures on the page, the report has %d", len(charts), want)
	}
	for _, c := range charts {
		if c.Paths < 5 || c.Width < 300 {
			t.Errorf("chart %s: %d paths drawn, %d px wide", c.ID, c.Paths, c.Width)
		}
	}
	if overflow {
		t.Error("at a phone's width the page is wider than the screen")
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if share := inked(img); share < 0.03 {
		t.Errorf("the screenshot is almost blank: %.1f%% of its pixels are not white", 100*share)
	}
	if *update {
		if err := os.WriteFile(filepath.Join("..", "docs", "report.png"), top, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// inked is the share of the image's pixels that are not white.
func inked(img image.Image) float64 {
	b := img.Bounds()
	n, total := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				n++
			}
			total++
		}
	}
	return float64(n) / float64(total)
}
