package image

import (
	"bytes"
	"encoding/binary"
)

// exifOrientation returns the EXIF orientation (1 to 8) of the JPEG
// file data: tag 0x0112 (Orientation, one SHORT) of IFD0 in the first
// APP1 segment that starts "Exif\x00\x00", before the first scan. It
// returns 1 where there is none, and where the markers, the segment or
// the EXIF are malformed (lengths or offsets out of bounds, another byte
// order mark, a tag of another type or count, a value outside 1..8):
// malformed metadata never fails a decode. It reads what the codec
// plugin's C parser reads, and agrees with it (TestDecodeOrientation in
// plugins/codec).
func exifOrientation(data []byte) int {
	if len(data) < 2 || data[0] != 0xFF || data[1] != 0xD8 {
		return 1
	}
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return 1
		}
		m := data[i+1]
		switch {
		case m == 0xFF: // a fill byte
			i++
			continue
		case m == 0x01 || (m >= 0xD0 && m <= 0xD8): // no length
			i += 2
			continue
		case m == 0xDA || m == 0xD9: // a scan, or the end
			return 1
		}
		n := int(data[i+2])<<8 | int(data[i+3])
		if n < 2 || n > len(data)-i-2 {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if m == 0xE1 && len(seg) >= 6 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads the Orientation tag of IFD0 of the TIFF
// structure t; 1 if it is missing or malformed.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	ifd := uint64(bo.Uint32(t[4:]))
	n := uint64(len(t))
	if ifd > n || n-ifd < 2 {
		return 1
	}
	count := uint64(bo.Uint16(t[ifd:]))
	if n-ifd-2 < 12*count {
		return 1 // more entries than the segment holds
	}
	for k := range count {
		e := t[ifd+2+12*k:][:12]
		if bo.Uint16(e) != 0x0112 {
			continue
		}
		if bo.Uint16(e[2:]) != 3 || bo.Uint32(e[4:]) != 1 { // SHORT, count 1
			return 1
		}
		if v := int(bo.Uint16(e[8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// orient writes the HWC image src (h×w, c channels, compact) into dst
// turned and mirrored upright by EXIF orientation o: 2 mirrors left to
// right, 3 turns 180°, 4 mirrors top to bottom, 5 transposes, 6 turns
// 90° clockwise, 7 transverses, 8 turns 90° anticlockwise. dst is w×h for
// 5 to 8, h×w otherwise, compact.
func orient(dst, src []byte, h, w, c, o int) {
	dw := w // dst's width
	if o >= 5 {
		dw = h
	}
	for r := range len(dst) / (dw * c) {
		for col := range dw {
			var y, x int
			switch o {
			case 2:
				y, x = r, w-1-col
			case 3:
				y, x = h-1-r, w-1-col
			case 4:
				y, x = h-1-r, col
			case 5:
				y, x = col, r
			case 6:
				y, x = h-1-col, r
			case 7:
				y, x = h-1-col, w-1-r
			case 8:
				y, x = col, w-1-r
			default:
				y, x = r, col
			}
			copy(dst[(r*dw+col)*c:][:c], src[(y*w+x)*c:])
		}
	}
}
