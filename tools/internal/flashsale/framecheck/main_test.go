package main

import (
	"encoding/base64"
	"image"
	"image/color"
	"strings"
	"testing"
)

// A picture passes only with ink that keeps the margin from every edge; one whose ink
// reaches an edge (a label cut at the frame) fails, naming the edge, and so does a
// blank one.
func TestCheckFrame(t *testing.T) {
	frame := image.Rect(0, 0, 600, 300)
	for _, tc := range []struct {
		ink  image.Rectangle
		want string // "" for no error
	}{
		{image.Rect(16, 18, 589, 282), ""},
		{image.Rect(4, 4, 596, 296), ""},
		{image.Rect(16, 0, 589, 282), "top (0 px blank, want 4)"},
		{image.Rect(16, 18, 600, 282), "right (0 px blank, want 4)"},
		{image.Rect(3, 18, 589, 298), "left (3 px blank, want 4) bottom (2 px blank, want 4)"},
		{image.Rectangle{}, "no ink"},
	} {
		err := checkFrame(frame, tc.ink, 4)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("ink %v: %v, want %q", tc.ink, err, tc.want)
		}
	}
}

// Ink is any pixel that is not near-white, anti-aliased grey included.
func TestInkBounds(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 50, 40))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	if got := inkBounds(img); !got.Empty() {
		t.Errorf("a white picture has ink %v", got)
	}
	img.Set(7, 5, color.RGBA{R: 0xe0, G: 0xe0, B: 0xe0, A: 0xff}) // light grey: ink
	img.Set(30, 33, color.Black)
	img.Set(40, 2, color.RGBA{R: 0xf0, G: 0xf0, B: 0xf0, A: 0xff}) // near-white: no ink
	if got, want := inkBounds(img), image.Rect(7, 5, 31, 34); got != want {
		t.Errorf("ink %v, want %v", got, want)
	}
}

// Pictures are found inline and as the SVG data: URIs of older reports, with the
// page's style sheet; their size is read in CSS pixels.
func TestPictures(t *testing.T) {
	old := `<svg width="453.54pt" height="226.77pt" viewBox="0 0 453.54 226.77"><text>b</text></svg>`
	page := `<html><head><style>@font-face { font-family: "X"; }</style></head><body>` +
		`<svg width="453.54pt" height="226.77pt" viewBox="0 0 453.54 226.77"><text>a</text></svg>` +
		`<img src="data:image/svg&#43;xml;base64,` + base64.StdEncoding.EncodeToString([]byte(old)) + `" /></body></html>`
	figs, style := pictures([]byte(page))
	if len(figs) != 2 || !strings.Contains(string(figs[0]), "<text>a</text>") || string(figs[1]) != old || string(style) != `@font-face { font-family: "X"; }` {
		t.Fatalf("pictures %q, style %q", figs, style)
	}
	for _, f := range figs {
		if w, h, err := svgSize(f); err != nil || w != 605 || h != 303 {
			t.Errorf("size %d×%d %v, want 605×303 px", w, h, err)
		}
	}
}
