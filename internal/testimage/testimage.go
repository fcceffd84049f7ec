// Package testimage holds the main job of issue 23 that benchmarks run —
// its pipeline file, and the generated photos it runs over: JPEG files
// with smooth gradients and fine texture, so that decoding, resizing,
// blurring and encoding them costs what photos cost.
package testimage

import (
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
)

// MainJob is the main job's pipeline file: decode the JPEG photos of in/,
// resize them to 960×540 (bilinear, imgproc), blur them (sigma 2,
// imgproc) and encode them as JPEG at quality 90 into out/.
const MainJob = `name: mainjob
batch_size: 8
inputs:
  photos: {files: [in/]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos], args: {channels: 3}}
  - {name: half, op: imgproc.Resize, inputs: [decode], args: {width: 960, height: 540}}
  - {name: blur, op: imgproc.GaussianBlur, inputs: [half], args: {sigma: 2.0}}
outputs:
  out: {from: blur, dir: out, format: jpeg, quality: 90}
`

// WriteJPEGs writes n w×h photos, photo00.jpg, photo01.jpg, …, into dir
// at JPEG quality 90. Photo k differs from the others.
func WriteJPEGs(dir string, n, w, h int) error {
	for k := range n {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := range h {
			for x := range w {
				i := img.PixOffset(x, y)
				img.Pix[i+0] = uint8((x*x/max(w/4, 1) + y + k*17) & 0xff)
				img.Pix[i+1] = uint8((x + 2*y*y/max(h/3, 1) + k*5) & 0xff)
				img.Pix[i+2] = uint8(((x ^ y) + k*31) & 0xff)
				img.Pix[i+3] = 255
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("photo%02d.jpg", k)))
		if err != nil {
			return err
		}
		err = jpeg.Encode(f, img, &jpeg.Options{Quality: 90})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("photo %d: %w", k, err)
		}
	}
	return nil
}
