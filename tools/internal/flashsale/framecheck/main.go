// Command framecheck checks, in a real browser, that the pictures of a flashsale HTML
// report keep every label and legend inside their frame, and photographs the report's
// first screen for a person to look at. It is run by hand (CI does not install a
// browser):
//
//	go run ./tools/cmd/flashsale -sku cup-01 -pay-ratio 0.7 -refund-ratio 0.2 -report sale.html
//	go run ./tools/internal/flashsale/framecheck -report sale.html -shot first-screen.png
//
// Each picture (an inline <svg>, or the <img> SVG data: URI of older reports) is put
// alone on a page with the report's own style (its embedded font) and photographed by
// headless Chromium at the picture's size; the photograph must have ink, and no ink
// within -margin pixels of any edge: a label or legend that does not fit is cut at the
// frame and leaves ink on the edge. Then the whole report is photographed at 1280×800
// into -shot. It prints one line per picture and exits 1 when one fails, 2 when it
// cannot run (no report, no chromium).
//
// Chromium (Debian: apt-get install chromium) runs headless with a fresh profile, no
// sandbox, no GPU and no network features: --headless --no-sandbox --disable-gpu
// --disable-quic --no-first-run --disable-background-networking
// --disable-component-update --disable-sync --user-data-dir=<temporary directory>.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"html"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

func main() {
	report := flag.String("report", "", "the flashsale HTML report to check, e.g. -report sale.html")
	shot := flag.String("shot", "", "write a 1280×800 photograph of the report's first screen here, e.g. -shot first-screen.png")
	margin := flag.Int("margin", 4, "pixels at each edge of a picture that must stay blank, e.g. -margin 4")
	browser := flag.String("chromium", "chromium", "the Chromium program, e.g. -chromium /usr/bin/chromium")
	flag.Parse()
	if *report == "" {
		fmt.Fprintln(os.Stderr, "framecheck: give -report FILE (a flashsale -report page)")
		os.Exit(2)
	}
	failed, err := run(*report, *shot, *browser, *margin)
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "framecheck: %v\n", err)
		os.Exit(2)
	case failed > 0:
		os.Exit(1)
	}
}

// run checks every picture of the report at path and photographs its first screen into
// shot (when not ""); it returns how many pictures failed.
func run(path, shot, browser string, margin int) (int, error) {
	page, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	figs, style := pictures(page)
	if len(figs) == 0 {
		return 0, fmt.Errorf("%s has no pictures", path)
	}
	dir, err := os.MkdirTemp("", "framecheck")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	failed := 0
	for i, svg := range figs {
		w, h, err := svgSize(svg)
		if err != nil {
			return failed, fmt.Errorf("picture %d: %w", i+1, err)
		}
		alone := filepath.Join(dir, fmt.Sprintf("picture%d.html", i+1))
		doc := `<!DOCTYPE html><html><head><meta charset="utf-8"><style>` + string(style) +
			` html, body { margin: 0; padding: 0; max-width: none; background: #fff; } svg { display: block; border: 0; }</style></head><body>` + string(svg) + `</body></html>`
		if err := os.WriteFile(alone, []byte(doc), 0o600); err != nil {
			return failed, err
		}
		img, err := photograph(browser, alone, w, h, dir)
		if err != nil {
			return failed, fmt.Errorf("picture %d: %w", i+1, err)
		}
		ink := inkBounds(img)
		if err := checkFrame(img.Bounds(), ink, margin); err != nil {
			failed++
			fmt.Printf("picture %d (%d×%d px): FAIL: %v\n", i+1, w, h, err)
			continue
		}
		b := img.Bounds()
		fmt.Printf("picture %d (%d×%d px): inside its frame: ink from x %d to %d and y %d to %d, blank margins left %d, right %d, top %d, bottom %d px\n",
			i+1, w, h, ink.Min.X, ink.Max.X-1, ink.Min.Y, ink.Max.Y-1, ink.Min.X-b.Min.X, b.Max.X-ink.Max.X, ink.Min.Y-b.Min.Y, b.Max.Y-ink.Max.Y)
	}
	if shot != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return failed, err
		}
		img, err := photograph(browser, abs, 1280, 800, dir)
		if err != nil {
			return failed, fmt.Errorf("first screen: %w", err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return failed, err
		}
		if err := os.WriteFile(shot, buf.Bytes(), 0o644); err != nil {
			return failed, err
		}
		fmt.Printf("first screen (1280×800 px): %s\n", shot)
	}
	return failed, nil
}

var (
	inlineSVG = regexp.MustCompile(`(?s)<svg\b.*?</svg>`)
	dataSVG   = regexp.MustCompile(`src="data:image/svg(?:\+|&#43;)xml;base64,([^"]+)"`)
	styleTag  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	svgAttrs  = regexp.MustCompile(`<svg\b[^>]*?\swidth="([\d.]+)(pt|px)?"[^>]*?\sheight="([\d.]+)(pt|px)?"`)
)

// pictures returns the report's pictures as SVG markup (inline <svg> elements, or the
// <img> SVG data: URIs of older reports) and the report's style sheet.
func pictures(page []byte) ([][]byte, []byte) {
	var style []byte
	if m := styleTag.FindSubmatch(page); m != nil {
		style = m[1]
	}
	figs := inlineSVG.FindAll(page, -1)
	for _, m := range dataSVG.FindAllSubmatch(page, -1) {
		svg, err := base64.StdEncoding.DecodeString(html.UnescapeString(string(m[1])))
		if err == nil {
			figs = append(figs, svg)
		}
	}
	return figs, style
}

// svgSize is the size of an SVG element's width and height attributes, in CSS pixels
// (1 pt = 4/3 px), rounded up.
func svgSize(svg []byte) (int, int, error) {
	m := svgAttrs.FindSubmatch(svg)
	if m == nil {
		return 0, 0, errors.New("an <svg> without width and height")
	}
	px := func(v, unit []byte) int {
		f, _ := strconv.ParseFloat(string(v), 64)
		if string(unit) == "pt" {
			f *= 4.0 / 3
		}
		return int(math.Ceil(f))
	}
	return px(m[1], m[2]), px(m[3], m[4]), nil
}

// photograph loads file in headless Chromium with a w×h window and returns the
// screenshot.
func photograph(browser, file string, w, h int, dir string) (image.Image, error) {
	profile, err := os.MkdirTemp(dir, "profile")
	if err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
		"--hide-scrollbars", "--force-device-scale-factor=1", fmt.Sprintf("--window-size=%d,%d", w, h), "--screenshot="+out, "file://"+file)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", browser, err, bytes.TrimSpace(msg))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return png.Decode(bytes.NewReader(data))
}

// nearWhite is the lowest channel value (of 0xffff) a blank pixel has: 0.9 of full.
const nearWhite = 0xffff * 9 / 10

// inkBounds is the smallest rectangle holding every pixel of img that is not
// near-white (a channel below 0.9 of full); empty when there is none.
func inkBounds(img image.Image) image.Rectangle {
	var ink image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if min(r, g, bl) < nearWhite {
				ink = ink.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return ink
}

// checkFrame reports whether ink, the inked part of a picture of bounds frame, keeps
// at least margin blank pixels from every edge; the error names the edges it reaches.
func checkFrame(frame, ink image.Rectangle, margin int) error {
	if ink.Empty() {
		return errors.New("no ink: the picture is blank")
	}
	var touched []string
	for _, e := range []struct {
		edge string
		gap  int
	}{{"left", ink.Min.X - frame.Min.X}, {"right", frame.Max.X - ink.Max.X}, {"top", ink.Min.Y - frame.Min.Y}, {"bottom", frame.Max.Y - ink.Max.Y}} {
		if e.gap < margin {
			touched = append(touched, fmt.Sprintf("%s (%d px blank, want %d)", e.edge, e.gap, margin))
		}
	}
	if len(touched) > 0 {
		return fmt.Errorf("ink reaches the frame at the %v: something is cut off or touches it", touched)
	}
	return nil
}
