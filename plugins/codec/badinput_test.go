package codec_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image/png"
	"testing"

	"github.com/dynop/dynop/plugins/codec"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// pngWithIHDR returns data, a PNG, with its IHDR's width and height
// replaced and its CRC fixed.
func pngWithIHDR(data []byte, w, h uint32) []byte {
	d := append([]byte{}, data...)
	binary.BigEndian.PutUint32(d[16:], w)
	binary.BigEndian.PutUint32(d[20:], h)
	binary.BigEndian.PutUint32(d[29:], crc32.ChecksumIEEE(d[12:29]))
	return d
}

// jpegWithSize returns data, a baseline JPEG, with its SOF0's height and
// width replaced.
func jpegWithSize(t *testing.T, data []byte, w, h uint16) []byte {
	d := append([]byte{}, data...)
	i := bytes.Index(d, []byte{0xFF, 0xC0})
	if i < 0 {
		t.Fatal("no SOF0")
	}
	binary.BigEndian.PutUint16(d[i+5:], h)
	binary.BigEndian.PutUint16(d[i+7:], w)
	return d
}

// TestBadInputs: every kind of bad file fails Setup or Run with an error
// that says what is wrong, and nothing crashes.
func TestBadInputs(t *testing.T) {
	h := openCodec(t)
	jpg := encodeJPEG(t, photo(64, 48, false), 90)
	var pb bytes.Buffer
	if err := png.Encode(&pb, photo(64, 48, true)); err != nil {
		t.Fatal(err)
	}
	pngData := pb.Bytes()
	webp, err := encodeWith(t, h, codec.Encode, mustTensor(t, photo(64, 48, false), 3), schema.Args{"format": "webp"})
	if err != nil {
		t.Fatal(err)
	}
	corruptJPEG := append([]byte{}, jpg...)
	sos := bytes.Index(corruptJPEG, []byte{0xFF, 0xDA})
	for i := sos + 20; i < len(corruptJPEG)-2; i += 3 {
		corruptJPEG[i] = 0xFF
	}
	corruptPNG := append([]byte{}, pngData...)
	corruptPNG[len(corruptPNG)/2] ^= 0x55 // inside IDAT: its CRC no longer matches
	corruptWebP := append([]byte{}, webp...)
	copy(corruptWebP[23:26], []byte{0, 0, 0}) // the VP8 frame's start code
	badCRC := append([]byte{}, pngData...)
	badCRC[29] ^= 1 // IHDR's CRC
	// A header that claims an animation (VP8X with the animation flag).
	animated := []byte("RIFF\x1a\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02\x00\x00\x00\x0f\x00\x00\x0f\x00\x00")
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{"not a JPEG, PNG or WebP file: 0 bytes"}},
		{"text named .jpg", []byte("hello, this is text\n"), []string{"not a JPEG, PNG or WebP file: 20 bytes starting 68 65 6c 6c 6f 2c 20 74"}},
		{"truncated JPEG header", jpg[:40], []string{"codec.Decode: JPEG:"}},
		{"truncated JPEG", jpg[:len(jpg)/2], []string{"codec.Decode: JPEG:", "Premature end of JPEG file"}},
		{"corrupt JPEG", corruptJPEG, []string{"codec.Decode: JPEG:"}},
		{"JPEG bomb", jpegWithSize(t, jpg, 65000, 65000), []string{"a 65000x65000 image has 4225000000 pixels, more than the 268435456 Decode allows"}},
		{"truncated PNG header", pngData[:20], []string{"codec.Decode: PNG:", "truncated"}},
		{"truncated PNG", pngData[:len(pngData)-40], []string{"codec.Decode: PNG:", "truncated"}},
		{"corrupt PNG", corruptPNG, []string{"codec.Decode: PNG: IDAT:"}},
		{"PNG with a bad CRC", badCRC, []string{"codec.Decode: PNG: IHDR: CRC error"}},
		{"PNG bomb", pngWithIHDR(pngData, 100000, 100000), []string{"codec.Decode: PNG: a 100000x100000 image has 10000000000 pixels, more than the 268435456 Decode allows"}},
		{"PNG of zero width", pngWithIHDR(pngData, 0, 48), []string{"codec.Decode: PNG: Invalid IHDR data (Image width is zero in IHDR)"}},
		{"truncated WebP", webp[:len(webp)/2], []string{"codec.Decode: WebP: truncated (not enough data)"}},
		{"truncated WebP header", webp[:16], []string{"codec.Decode: WebP: truncated (not enough data)"}},
		{"corrupt WebP", corruptWebP, []string{"codec.Decode: WebP: corrupt data (bitstream error)"}},
		{"animated WebP", animated, []string{"codec.Decode: WebP: an animated WebP (16x16) is not supported"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeWith(t, h, codec.Decode, c.data, nil)
			if err == nil {
				t.Fatal("decoded")
			}
			for _, w := range c.want {
				if !bytes.Contains([]byte(err.Error()), []byte(w)) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestBadDecodeInputs: inputs of the wrong dtype or rank and arguments
// out of range are refused, each saying why.
func TestBadDecodeInputs(t *testing.T) {
	h := openCodec(t)
	f, _ := tensor.FromSlice([]float32{1, 2, 3}, 3)
	_, err := run(h, codec.Decode, nil, f)
	wantErr(t, err, "float32")
	m, _ := tensor.FromSlice(make([]uint8, 6), 2, 3)
	_, err = run(h, codec.Decode, nil, m)
	wantErr(t, err, "dim")
	jpg := encodeJPEG(t, photo(8, 8, false), 90)
	_, err = run(h, codec.Decode, schema.Args{"channels": 2}, bytesT(t, jpg))
	wantErr(t, err, "channels")
	_, err = run(h, codec.Decode, schema.Args{"min_width": -1}, bytesT(t, jpg))
	wantErr(t, err, "min_width")
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	if !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not say %q", err, want)
	}
}
