package codec_test

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/dynop/dynop/internal/cvtest"
	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
)

// u8diff returns the largest and the mean absolute difference of a and b.
func u8diff(t *testing.T, a, b []uint8) (maxd int, mean float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d values against %d", len(a), len(b))
	}
	sum := 0
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		sum += d
		maxd = max(maxd, d)
	}
	return maxd, float64(sum) / float64(len(a))
}

// TestCodecMatchesOpenCV compares codec.Decode and codec.Encode with
// OpenCV's cv2.imdecode and cv2.imencode (which use libjpeg-turbo,
// libpng and libwebp too), on a photo-like 64x48 image: PNG and lossless
// WebP decode bit for bit as OpenCV decodes them (BGR reordered to RGB);
// a JPEG decodes within 64 of OpenCV's pixels at hard colour edges (59
// measured) and within 3.5 on average (2.9) (codec.Decode upsamples chroma by replication,
// as Go's image/jpeg does, where OpenCV interpolates); the JPEG that
// codec.Encode writes at quality 90 has the same tables as OpenCV's own
// at quality 90, is within 5% of its size, and OpenCV decodes it with a
// mean error against the source within 5% of its own file's (the two
// decoded images differ by up to 11, 1.4 on average: the encoders'
// colour conversion and chroma downsampling, not their quality); its PNG
// reads back bit for bit. It skips without python3-opencv.
func TestCodecMatchesOpenCV(t *testing.T) {
	cvtest.Require(t)
	h := openCodec(t)
	img := photo(64, 48, false)
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, img); err != nil {
		t.Fatal(err)
	}
	jpg := encodeJPEG(t, img, 90)
	rgb, _, _, _ := pixels(t, mustTensor(t, img, 3))
	webp, err := encodeWith(t, h, codec.Encode, mustTensor(t, img, 3), schema.Args{"format": "webp", "lossless": true})
	if err != nil {
		t.Fatal(err)
	}
	ourJPEG, err := encodeWith(t, h, codec.Encode, mustTensor(t, img, 3), schema.Args{"format": "jpeg", "quality": 90})
	if err != nil {
		t.Fatal(err)
	}
	ourPNG, err := encodeWith(t, h, codec.Encode, mustTensor(t, img, 3), schema.Args{"format": "png"})
	if err != nil {
		t.Fatal(err)
	}
	files := [][]byte{pngBuf.Bytes(), webp, jpg, ourJPEG, ourPNG}
	var in []cvtest.Array
	for _, f := range files {
		in = append(in, cvtest.Array{DType: "uint8", Shape: []int64{int64(len(f))}, Data: f})
	}
	in = append(in, cvtest.Array{DType: "uint8", Shape: []int64{48, 64, 3}, Data: rgb})
	cv := cvtest.Run(t, `read = lambda f: cv2.cvtColor(cv2.imdecode(f, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)
ok, own = cv2.imencode(".jpg", cv2.cvtColor(inputs[5], cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90])
outputs = [read(inputs[0]), read(inputs[1]), read(inputs[2]), read(inputs[3]), read(own), read(inputs[4]), own]`, in...)
	for k, c := range []struct {
		name       string
		maxd       int
		meanWithin float64
	}{{"PNG", 0, 0}, {"lossless WebP", 0, 0}, {"JPEG", 64, 3.5}} {
		got, _, _, _ := pixels(t, mustDecode(t, h, codec.Decode, files[k], nil))
		maxd, mean := u8diff(t, got, cv[k].Data)
		t.Logf("decode %s: within %d of cv2.imdecode, %.3f on average", c.name, maxd, mean)
		if maxd > c.maxd || mean > c.meanWithin {
			t.Errorf("decode %s: within %d of cv2.imdecode, %.3f on average", c.name, maxd, mean)
		}
	}
	maxd, mean := u8diff(t, cv[3].Data, cv[4].Data)
	_, ourErr := u8diff(t, cv[3].Data, rgb)
	_, ownErr := u8diff(t, cv[4].Data, rgb)
	own := cv[6].Data
	t.Logf("encode JPEG q90: %d bytes (OpenCV's %d), mean error %.3f (OpenCV's %.3f); the two decode within %d of each other, %.3f on average", len(ourJPEG), len(own), ourErr, ownErr, maxd, mean)
	if ourErr > 1.05*ownErr || float64(len(ourJPEG)) > 1.05*float64(len(own)) || float64(len(ourJPEG)) < 0.95*float64(len(own)) {
		t.Errorf("encode JPEG q90: %d bytes against OpenCV's %d, mean error %.3f against its %.3f", len(ourJPEG), len(own), ourErr, ownErr)
	}
	if seg, ownSeg := jpegTables(ourJPEG), jpegTables(own); !bytes.Equal(seg, ownSeg) {
		t.Errorf("encode JPEG q90: quantisation tables differ from OpenCV's at quality 90")
	}
	if maxd, _ := u8diff(t, cv[5].Data, rgb); maxd != 0 {
		t.Errorf("encode PNG: OpenCV reads back pixels within %d", maxd)
	}
}

// jpegTables returns the DQT segments of a JPEG file, concatenated.
func jpegTables(b []byte) []byte {
	var out []byte
	for i := 2; i+4 <= len(b); {
		m, n := b[i+1], int(b[i+2])<<8|int(b[i+3])
		if m == 0xDB && i+2+n <= len(b) {
			out = append(out, b[i+4:i+2+n]...)
		}
		if m == 0xDA || n < 2 {
			break
		}
		i += 2 + n
	}
	return out
}
