// Command genimages draws the sample images of the demo pipelines in
// examples/pipelines: six colourful 320x240 RGB PNG files in images/, a
// Mandelbrot set, a plasma, interfering rings, translucent shapes on a
// sunset, a checkerboard with a lens and a landscape of sine hills; and in
// photos/ three of them drawn at 640x480 as JPEG "photos" (quality 90)
// the way cameras store them: hills.jpg upright, mandelbrot.jpg stored
// sideways with EXIF orientation 6 (turn 90° clockwise to view: a
// portrait), shapes.jpg stored upside down with orientation 3.
//
// The images are made by this program, which draws them from nothing but
// its own code, and are dedicated to the public domain under CC0 1.0
// (see ../images/LICENSE.txt).
//
// It computes in integers only, so that every platform draws the same
// pixels: Go may fuse a floating-point multiply and add into one
// instruction on some architectures and not on others, which would change
// the odd pixel. The test checks that the committed files are what the
// program writes, byte for byte (a Go release that compresses PNG
// differently would change their bytes, not their pixels, and call for
// running the program again). Run it from the repository root with
//
//	go run ./examples/pipelines/genimages
//
// or with go generate in this directory. The -dir and -photos flags name
// the directories to write into.
package main

//go:generate go run . -dir ../images -photos ../photos

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
)

// The size of every image, in pixels.
const (
	width  = 320
	height = 240
)

// A picture's coordinates are in units of 1/sub pixel; w and h are the
// images' width and height in those units.
const (
	sub = 8
	w   = width * sub
	h   = height * sub
)

// Angles are in units of 1/turn of a full turn, and sin returns one
// times the sine.
const (
	turn = 1 << 12
	one  = 1 << 12
)

// picture returns the colour at x, y, in units of 1/sub pixel.
type picture func(x, y int64) color.RGBA

// pictures are the images the program draws, with their file names.
var pictures = []struct {
	name string
	draw picture
}{
	{"mandelbrot.png", mandelbrot},
	{"plasma.png", plasma},
	{"rings.png", rings},
	{"shapes.png", shapes},
	{"checker.png", checker},
	{"hills.png", hills},
}

// photos are the pictures drawn at twice the size as JPEG photos, each
// with the EXIF orientation it is stored with: the pixels are the upright
// picture turned so that the orientation turns them back.
var photos = []struct {
	name        string
	draw        picture
	orientation int // 1 upright, 3 stored upside down, 6 stored turned 90° anticlockwise
}{
	{"hills.jpg", hills, 1},
	{"mandelbrot.jpg", mandelbrot, 6},
	{"shapes.jpg", shapes, 3},
}

func main() {
	dir := flag.String("dir", "examples/pipelines/images", "the directory to write the images into")
	photoDir := flag.String("photos", "examples/pipelines/photos", "the directory to write the JPEG photos into")
	flag.Parse()
	if err := generate(*dir); err != nil {
		log.Fatal(err)
	}
	if err := generatePhotos(*photoDir); err != nil {
		log.Fatal(err)
	}
}

// generatePhotos writes every photo into dir as a JPEG file of quality
// 90 with its EXIF orientation, creating dir if need be.
func generatePhotos(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range photos {
		m := renderDouble(p.draw)
		if p.orientation == 3 {
			m = turn180(m)
		}
		// Orientation 6: the upright (portrait) photo is the landscape
		// picture turned 90° clockwise; the camera stores the picture.
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		data := buf.Bytes()
		if p.orientation != 1 {
			data = withOrientation(data, p.orientation)
		}
		if err := os.WriteFile(filepath.Join(dir, p.name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withOrientation inserts after the JPEG's SOI marker an APP1 segment
// with EXIF holding one tag, Orientation (0x0112, SHORT) = o, big-endian.
func withOrientation(jpg []byte, o int) []byte {
	tiff := []byte{'M', 'M', 0, 42, 0, 0, 0, 8, // header, IFD0 at 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0, // Orientation, SHORT, count 1, value
		0, 0, 0, 0} // no next IFD
	payload := append([]byte("Exif\x00\x00"), tiff...)
	n := len(payload) + 2
	seg := append([]byte{0xFF, 0xE1, byte(n >> 8), byte(n)}, payload...)
	return append(append(append([]byte{}, jpg[:2]...), seg...), jpg[2:]...)
}

// turn180 returns m turned upside down.
func turn180(m *image.RGBA) *image.RGBA {
	b := m.Bounds()
	t := image.NewRGBA(b)
	for y := range b.Dy() {
		for x := range b.Dx() {
			t.SetRGBA(b.Dx()-1-x, b.Dy()-1-y, m.RGBAAt(x, y))
		}
	}
	return t
}

// generate writes every picture into dir as a PNG file, creating dir if
// need be.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	for _, p := range pictures {
		f, err := os.Create(filepath.Join(dir, p.name))
		if err != nil {
			return err
		}
		err = enc.Encode(f, render(p.draw))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return nil
}

// render draws p into an opaque image, each pixel the average of p at
// 4x4 points spread evenly over it.
func render(p picture) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, width, height))
	for py := range height {
		for px := range width {
			var r, g, b int64
			for j := range int64(4) {
				for i := range int64(4) {
					c := p(int64(px)*sub+2*i+1, int64(py)*sub+2*j+1)
					r, g, b = r+int64(c.R), g+int64(c.G), b+int64(c.B)
				}
			}
			m.SetRGBA(px, py, color.RGBA{uint8((r + 8) / 16), uint8((g + 8) / 16), uint8((b + 8) / 16), 255})
		}
	}
	return m
}

// renderDouble draws p at twice the size, 640x480, each pixel the average
// of p at 2x2 points spread evenly over it.
func renderDouble(p picture) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, 2*width, 2*height))
	for py := range 2 * height {
		for px := range 2 * width {
			var r, g, b int64
			for j := range int64(2) {
				for i := range int64(2) {
					c := p(int64(px)*sub/2+2*i+1, int64(py)*sub/2+2*j+1)
					r, g, b = r+int64(c.R), g+int64(c.G), b+int64(c.B)
				}
			}
			m.SetRGBA(px, py, color.RGBA{uint8((r + 2) / 4), uint8((g + 2) / 4), uint8((b + 2) / 4), 255})
		}
	}
	return m
}

// mandelbrot is the Mandelbrot set in the plane from -2.2-1.05i to
// 0.6+1.05i, points outside coloured by how fast they escape.
func mandelbrot(x, y int64) color.RGBA {
	const (
		q     = 1 << 26 // fixed point: q is 1
		left  = -22 * q / 10
		top   = 105 * q / 100
		span  = 28 * q / 10 // the width of the view
		limit = 256
	)
	cr, ci := left+x*span/w, top-y*span/w
	var zr, zi int64
	for n := range int64(limit) {
		zr2, zi2 := zr*zr/q, zi*zi/q
		if zr2+zi2 > 4*q {
			return cyclic(ultra, n, 6)
		}
		zr, zi = zr2-zi2+cr, 2*zr*zi/q+ci
	}
	return color.RGBA{0, 0, 16, 255}
}

// ultra is a palette of deep blue, white and orange.
var ultra = []color.RGBA{
	{0, 7, 100, 255}, {32, 107, 203, 255}, {237, 255, 255, 255},
	{255, 170, 0, 255}, {120, 30, 0, 255}, {0, 2, 40, 255},
}

// plasma is a sum of sine waves along lines and circles, through a
// rainbow palette.
func plasma(x, y int64) color.RGBA {
	v := sin(x*turn/(230*sub)) +
		sin(y*turn/(170*sub)+turn/4) +
		sin((x+2*y)*turn/(400*sub)) +
		sin(hypot(x-90*sub, y-170*sub)*turn/(140*sub))
	return cyclic(rainbow, v, 2*one/3)
}

// rainbow is a palette of saturated hues.
var rainbow = []color.RGBA{
	{255, 40, 120, 255}, {255, 150, 30, 255}, {250, 230, 60, 255},
	{40, 200, 140, 255}, {30, 120, 230, 255}, {120, 50, 200, 255},
}

// rings are two sets of concentric rings, one in red and one in blue,
// interfering.
func rings(x, y int64) color.RGBA {
	d1 := hypot(x-110*sub, y-100*sub)
	d2 := hypot(x-215*sub, y-145*sub)
	r := sin(d1 * turn / (32 * sub))
	b := sin(d2 * turn / (28 * sub))
	g := sin((d1 + d2) * turn / (90 * sub))
	return color.RGBA{level(r, 60, 250), level(g, 40, 200), level(b, 70, 255), 255}
}

// level maps s from -one..one to lo..hi.
func level(s, lo, hi int64) uint8 {
	return uint8(lo + ((s+one)*(hi-lo)+one)/(2*one))
}

// shapes are translucent shapes over a sunset sky.
func shapes(x, y int64) color.RGBA {
	c := ramp(sunset, y, h/(int64(len(sunset))-1))
	for _, s := range shapeList {
		if s.inside(x, y) {
			c = mix(c, s.c, s.alpha, 255)
		}
	}
	return c
}

// sunset is the sky behind shapes, top to bottom.
var sunset = []color.RGBA{{25, 20, 80, 255}, {150, 50, 130, 255}, {250, 140, 70, 255}, {255, 220, 120, 255}}

// shapeList lists what shapes paints over the sky, in order, each blended
// in with its alpha (of 255).
var shapeList = []struct {
	inside func(x, y int64) bool
	c      color.RGBA
	alpha  int64
}{
	{disc(95*sub, 110*sub, 70*sub), color.RGBA{40, 220, 200, 255}, 170},
	{box(150*sub, 40*sub, 270*sub, 150*sub), color.RGBA{250, 240, 90, 255}, 150},
	{triangle(60*sub, 225*sub, 170*sub, 60*sub, 250*sub, 220*sub), color.RGBA{230, 40, 90, 255}, 160},
	{annulus(250*sub, 170*sub, 38*sub, 52*sub), color.RGBA{255, 255, 255, 255}, 200},
	{disc(40*sub, 40*sub, 22*sub), color.RGBA{255, 250, 220, 255}, 230},
}

// disc returns whether a point is inside the disc of radius r about
// cx, cy.
func disc(cx, cy, r int64) func(x, y int64) bool {
	return func(x, y int64) bool { return sq(x-cx)+sq(y-cy) < sq(r) }
}

// annulus returns whether a point is between radii r0 and r1 of cx, cy.
func annulus(cx, cy, r0, r1 int64) func(x, y int64) bool {
	return func(x, y int64) bool {
		d := sq(x-cx) + sq(y-cy)
		return sq(r0) <= d && d < sq(r1)
	}
}

// box returns whether a point is inside the rectangle from x0, y0 to
// x1, y1.
func box(x0, y0, x1, y1 int64) func(x, y int64) bool {
	return func(x, y int64) bool { return x0 <= x && x < x1 && y0 <= y && y < y1 }
}

// triangle returns whether a point is inside the triangle of corners
// x0, y0, x1, y1 and x2, y2, given clockwise on the screen.
func triangle(x0, y0, x1, y1, x2, y2 int64) func(x, y int64) bool {
	// edge is positive right of the edge from a to b on the screen.
	edge := func(ax, ay, bx, by, x, y int64) int64 { return (bx-ax)*(y-ay) - (by-ay)*(x-ax) }
	return func(x, y int64) bool {
		return edge(x0, y0, x1, y1, x, y) >= 0 && edge(x1, y1, x2, y2, x, y) >= 0 && edge(x2, y2, x0, y0, x, y) >= 0
	}
}

// checker is a checkerboard of 40-pixel squares with a lens in the middle
// that shows it in other colours.
func checker(x, y int64) color.RGBA {
	dark := (x/(40*sub)+y/(40*sub))%2 == 1
	inLens := sq(x-w/2)+sq(y-h/2) < sq(85*sub)
	switch {
	case inLens && dark:
		return color.RGBA{30, 40, 120, 255}
	case inLens:
		return color.RGBA{255, 120, 90, 255}
	case dark:
		return color.RGBA{20, 120, 120, 255}
	default:
		return color.RGBA{245, 235, 200, 255}
	}
}

// hills is a landscape: ranges of sine hills, paler with distance, under
// a sky with a sun.
func hills(x, y int64) color.RGBA {
	c := ramp(sky, y, h/2)
	if d := hypot(x-245*sub, y-65*sub); d < 26*sub {
		c = color.RGBA{255, 245, 200, 255}
	} else if d < 70*sub {
		c = mix(color.RGBA{255, 230, 170, 255}, c, d-26*sub, 44*sub)
	}
	for _, r := range ranges {
		top := r.base + r.a1*sin(x*turn/r.p1+r.phase)/one + r.a2*sin(x*turn/r.p2)/one
		if y >= top {
			c = r.c
		}
	}
	return c
}

// sky is the sky of hills, top to bottom.
var sky = []color.RGBA{{70, 130, 210, 255}, {170, 210, 240, 255}, {250, 235, 200, 255}}

// ranges are the ranges of hills that hills draws, from the farthest: the
// top of a range at x is at y = base + a1*sin(2πx/p1 + phase) + a2*sin(2πx/p2),
// angles in units of 1/turn.
var ranges = []struct {
	base, a1, p1, phase, a2, p2 int64
	c                           color.RGBA
}{
	{120 * sub, 18 * sub, 190 * sub, 0, 7 * sub, 70 * sub, color.RGBA{140, 170, 190, 255}},
	{150 * sub, 15 * sub, 150 * sub, turn / 3, 6 * sub, 55 * sub, color.RGBA{90, 150, 120, 255}},
	{180 * sub, 14 * sub, 260 * sub, turn / 2, 5 * sub, 80 * sub, color.RGBA{50, 120, 70, 255}},
	{210 * sub, 12 * sub, 210 * sub, turn / 5, 4 * sub, 45 * sub, color.RGBA{25, 80, 40, 255}},
}

// sin returns one*sin(2πa/turn) after Bhaskara I's approximation
// 16θ(π-θ)/(5π²-4θ(π-θ)) for θ in [0, π]: exact at multiples of a
// quarter turn, within 0.0017 of the sine elsewhere.
func sin(a int64) int64 {
	const half = turn / 2
	a = mod(a, turn)
	sign := int64(1)
	if a >= half {
		a, sign = a-half, -1
	}
	p := a * (half - a)
	return sign * 16 * one * p / (5*half*half - 4*p)
}

// hypot returns the distance of x, y from the origin, rounded down.
func hypot(x, y int64) int64 { return isqrt(sq(x) + sq(y)) }

// isqrt returns the square root of n >= 0, rounded down. math.Sqrt rounds
// correctly on every platform; the loops make the result exact.
func isqrt(n int64) int64 {
	r := int64(math.Sqrt(float64(n)))
	for r*r > n {
		r--
	}
	for (r+1)*(r+1) <= n {
		r++
	}
	return r
}

func sq(v int64) int64 { return v * v }

// mod returns a modulo m, in 0..m-1 for m > 0.
func mod(a, m int64) int64 { return (a%m + m) % m }

// mix returns the colour f/n of the way from a to b, for f in 0..n,
// rounded to nearest.
func mix(a, b color.RGBA, f, n int64) color.RGBA {
	ch := func(u, v uint8) uint8 { return uint8((int64(u)*(n-f) + int64(v)*f + n/2) / n) }
	return color.RGBA{ch(a.R, b.R), ch(a.G, b.G), ch(a.B, b.B), 255}
}

// ramp returns the colour at t of a gradient through stops that lie step
// apart, t clamped to the first and last.
func ramp(stops []color.RGBA, t, step int64) color.RGBA {
	t = min(max(t, 0), (int64(len(stops))-1)*step)
	i := min(t/step, int64(len(stops))-2)
	return mix(stops[i], stops[i+1], t-i*step, step)
}

// cyclic returns the colour at t of a cyclic palette whose stops lie step
// apart, the last leading back to the first.
func cyclic(stops []color.RGBA, t, step int64) color.RGBA {
	n := int64(len(stops))
	t = mod(t, n*step)
	i := t / step
	return mix(stops[i], stops[(i+1)%n], t%step, step)
}
