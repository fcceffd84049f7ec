// Package codec describes the native plugin dynop.plugin.codec, built
// from c/codec.c into libdynop_codec.so (make plugins, where the headers
// of libturbojpeg, libpng and libwebp are installed: apt-get install
// libturbojpeg0-dev libpng-dev libwebp-dev). It decodes and encodes images
// with the libraries the field uses — libjpeg-turbo through its TurboJPEG
// 2.x API, libpng 1.6 and libwebp — on the CPU, several times faster than
// Go's image/jpeg and image/png, and its populate passes make pipelines
// that ask for the Go operators image.Decode and image.Encode (plugins/image)
// run these instead.
//
// # Decode
//
// [Decode] takes the bytes of a JPEG, PNG or WebP file, a 1-D uint8 vector
// with contiguous bytes, told apart by their first bytes (FF D8 FF, the
// PNG signature, RIFF....WEBP), and yields uint8 HWC pixels with
// channels (1, 3 or 4; default 3) channels: 1 is luma, 3 RGB, 4 RGBA with
// straight alpha (255 where the file has none). Setup reads only the
// headers to size the outputs; Run decodes. Arguments:
//
//   - channels (1, 3, 4; default 3), as image.Decode.
//   - orientation (bool, default true): turn a JPEG upright by its EXIF
//     orientation, the Orientation tag (0x0112, one SHORT of value 1..8)
//     of IFD0 of the first APP1 "Exif\0\0" segment before the first scan.
//     2 mirrors left-right, 3 turns 180°, 4 mirrors top-bottom, 5
//     transposes, 6 turns 90° clockwise, 7 transverses, 8 turns 90°
//     counter-clockwise; 5 to 8 swap width and height. Output pixel (y, x)
//     of an image of w × h decoded pixels s is s(y, w-1-x) for 2,
//     s(h-1-y, w-1-x) for 3, s(h-1-y, x) for 4, s(x, y) for 5,
//     s(h-1-x, y) for 6, s(h-1-x, w-1-y) for 7 and s(x, w-1-y) for 8.
//     The parser checks every read against the segment: malformed EXIF
//     (markers, segment lengths, byte order, IFD offsets or entries out of
//     bounds, a tag of another type or count, a value outside 1..8) is
//     ignored, and the image decodes as orientation 1, never as an error.
//     PNG and WebP are not turned.
//   - min_width, min_height (0 to 2^20, default 0): JPEG shrink-on-load,
//     as libvips does it. With both 0 the image decodes at full size;
//     otherwise at the smallest DCT scale 1/8, 1/4, 1/2 or 1 whose output
//     (after orientation) is at least min_width wide and min_height high
//     (a 0 bounds nothing), full size if none is. A scale 1/d gives
//     ceil(w/d) × ceil(h/d) pixels, libjpeg's scaled IDCT, far cheaper than
//     decoding at full size and resizing. PNG and WebP ignore them.
//   - dtype (uint8 or uint16, default uint8): the output's dtype. With
//     uint16 a 16-bit PNG's samples are kept whole (what
//     cv2.imread(IMREAD_UNCHANGED) reads, TestDecode16BitMatchesOpenCV),
//     and 8-bit samples (JPEG, WebP, PNG of 8 bits or fewer) become
//     v·257, so that 255 is 65535; the channels convert as for uint8,
//     alpha 65535 where there is none and one channel from colour
//     (9798 R + 19235 G + 3735 B + 16384) >> 15 on the 16-bit samples.
//
// JPEG decodes with libjpeg-turbo's accurate integer IDCT and chroma
// upsampled by replication (TJFLAG_FASTUPSAMPLE: as Go's image/jpeg
// does, rather than libjpeg's default triangle filter), straight into the
// output where no orientation or orientations 2 to 4 apply (bottom-up
// decoding and an in-place mirror); orientations 5 to 8 decode into
// scratch memory from the host and are transposed into the output. Gray
// JPEGs are replicated into RGB; one channel from a colour JPEG is its
// decoded Y plane, which is BT.601 luma. CMYK and YCCK JPEGs (Adobe,
// inverted, as Photoshop writes them) decode into scratch and convert to
// RGB exactly as Go's color.CMYKToRGB does on what image/jpeg returns.
// Against image.Decode (Go's image/jpeg) at full size the outputs differ
// by the two libraries' IDCT and colour-conversion rounding: at most 3 in
// any channel and under 0.2 on average over a photo-like test image (what
// TestDecodeJPEGMatchesGo measures and enforces; libjpeg documents its
// accurate IDCT as IEEE 1180-compliant, not bit-exact with others).
// libjpeg's warnings are errors (a truncated or corrupt file fails, as with
// image/jpeg), except "extraneous bytes before marker", harmless and
// common in camera files. Progressive scans are limited to 500
// (TJFLAG_LIMITSCANS) against files built to take forever.
//
// PNG decodes with libpng: palette, tRNS and gray below 8 bits expand,
// 16-bit samples keep their high byte into uint8 (16-bit PNGs decode to 8
// bits, as image.Decode converts them; dtype uint16 keeps them whole), and the channels convert as image.Decode
// does: gray replicated to RGB, alpha 255 where there is none, alpha
// dropped for 3 channels, and one channel from a colour image is
// (9798 R + 19235 G + 3735 B + 16384) >> 15 of its RGB (through scratch). Outputs
// equal image.Decode's exactly, interlaced files included. Critical-chunk
// CRC errors and truncation fail; ancillary chunks are not interpreted
// (no gamma or colour-profile conversion, as in Go).
//
// WebP decodes with libwebp (lossy with its default fancy upsampling, or
// lossless), RGB or RGBA; one channel is the luma of its RGB, as for PNG.
// An animated WebP is refused with an error saying so. There is no Go
// WebP decoder among the module's dependencies to compare with: the tests
// check WebP by round trips through Encode (lossless: exact).
//
// Every file may have at most 2^28 pixels (16384 × 16384), image.Decode's
// limit, checked on the header in Setup before any memory is given to the
// pixels: a header that claims more (a decompression bomb) fails with
// "a W×H image has N pixels, more than the 268435456 Decode allows". The
// limit is on the file's size, before shrink-on-load.
//
// # Encode
//
// [Encode] takes uint8 HWC images with 1 (gray), 3 (RGB) or 4 (RGBA,
// straight alpha) channels, with any strides (uint16 ones too, written as
// 16-bit PNG; JPEG and WebP, whose samples are 8-bit, refuse them), and yields each encoded
// file's bytes as a 1-D uint8 vector. Arguments:
//
//   - format ("png", "jpeg", "webp"; default "png"). JPEG has no alpha and
//     drops the fourth channel; gray images are written as gray JPEG and
//     PNG, and as RGB WebP.
//   - quality (1 to 100, default 90): JPEG (libjpeg's quality scaling of
//     the standard tables, as image/jpeg's) and lossy WebP.
//   - subsampling ("420", "422", "444"; default "420", what image/jpeg
//     writes): JPEG chroma subsampling of colour images.
//   - progressive (bool, default false): JPEG, a progressive file.
//   - compression (0 to 9, default 6, image/png's default level): the PNG
//     zlib level; 0 also turns row filtering off.
//   - lossless (bool, default false): WebP lossless (quality ignored).
//     WebP is written "exact": the colour of fully transparent pixels is
//     kept, as straight alpha means, lossless or not.
//
// The size of a file is known only once it is encoded, so Setup encodes
// each sample into a buffer the instance keeps and reuses from batch to
// batch, and Run copies into each output the encoding Setup made from the
// same input tensor (same data pointer, shape and strides): the output
// encodes the pixels as Setup saw them. Run without a Setup of its inputs
// fails. JPEG may be at most 65535 and WebP 16383 pixels on a side; empty
// images are refused.
//
// # Passes
//
// The plugin's populate passes [NativeDecodePass] and [NativeEncodePass]
// attach Decode to graph nodes of kind image.Decode and Encode to nodes of
// kind image.Encode, with the same arguments (image.Decode's channels,
// and orientation false, as image/jpeg ignores EXIF; image.Encode's
// format and quality). A node with an argument that has no equivalent, or
// whose arguments codec refuses, keeps the Go operator (the reason is
// logged at debug level). So a pipeline such as examples/pipelines/demo.yaml
// or internal/testimage's MainJob decodes and encodes natively wherever
// the plugin is installed; skip both passes (graph.BuildOptions.Skip with
// [NativeCodecsPasses]) to keep Go's codecs. (There are two passes because
// a populate pass matches one node kind.)
//
// Where a decode node's images go to nothing but a resize to a fixed size
// (imgproc.Resize or image.Resize with width and height) and the graph
// hands none of them to its caller, the decode pass also sets min_width
// and min_height to that size: JPEGs decode shrunk in the DCT to the
// least 1/8, 1/4 or 1/2 still at least as large (libvips' shrink-on-load),
// and the resize finishes the job. The main job's 1920x1080 photos, resized
// to 960x540, decode at 960x540. The pixels are the DCT's downscale, not a
// full decode's bilinear one: to resize from the full image, write
// codec.Decode in the pipeline instead of image.Decode. The graph's
// outputs come from dynop_graph_builder 1.1; on an older host the pass
// never shrinks.
//
// # Instances
//
// An instance keeps its TurboJPEG handles and its encodings, so the
// operators are not safe for concurrent calls: a pipeline makes one
// instance per worker. Decode takes its scratch from the host
// (DYNOP_OPERATOR_SCRATCH). The library exports its EXIF parser for
// direct calls: int dynop_codec_exif_orientation(const uint8_t *p, size_t n)
// returns the orientation of the JPEG p of n bytes, 1 if none.
package codec

// PluginID is the plugin's ID.
const PluginID = "dynop.plugin.codec"

// Names of the plugin's operators.
const (
	// Decode decodes JPEG, PNG and WebP files to uint8 HWC pixels
	// (arguments channels, orientation, min_width, min_height).
	Decode = "codec.Decode"
	// Encode encodes uint8 HWC pixels as PNG, JPEG or WebP files
	// (arguments format, quality, subsampling, progressive, compression,
	// lossless).
	Encode = "codec.Encode"
)

// Names of the plugin's populate passes.
const (
	// NativeDecodePass replaces the Go operator image.Decode with Decode.
	NativeDecodePass = "codec.native-codecs.decode"
	// NativeEncodePass replaces the Go operator image.Encode with Encode.
	NativeEncodePass = "codec.native-codecs.encode"
)

// NativeCodecsPasses are both passes, to skip them together.
var NativeCodecsPasses = []string{NativeDecodePass, NativeEncodePass}

// MaxPixels is the most pixels a file that Decode reads may have, the
// limit of image.Decode.
const MaxPixels = 1 << 28
