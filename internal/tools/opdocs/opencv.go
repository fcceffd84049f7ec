package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dynop/dynop/op"
)

// comparison is a test or benchmark of the repository that compares
// operators with OpenCV.
type comparison struct {
	file string // repository-relative, slash-separated
	fn   string // the test or benchmark function
	// ops are the operators it compares.
	ops []string
	// outputs: it compares the operators' outputs with OpenCV's (what
	// says how closely, with its tolerance); else only their speed.
	outputs bool
	// what it compares, in a sentence of Markdown, from the test
	// itself: never a number the test does not check or print.
	what string
}

// openCV lists every test and benchmark that compares with OpenCV.
// Generation fails where a test function's doc comment or body mentions
// OpenCV (or cv2) and this table lacks it, or where the table names a
// test that is not there or no longer mentions OpenCV: a new comparison
// with OpenCV cannot go undocumented. Describe each from its code, and
// give a tolerance only where the test enforces one.
var openCV = []comparison{
	{
		file: "plugins/image/flip_test.go", fn: "TestFlipMatchesOpenCV",
		ops: []string{"image.Flip"}, outputs: true,
		what: "flips a random 17x23 uint8 RGB image left to right, top to bottom and both, and cv2.flip with flip codes 1, 0 and -1, and requires identical bytes: **bit-identical**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/scratch_test.go", fn: "TestGrayscaleMatchesOpenCV",
		ops: []string{"imgproc.Grayscale"}, outputs: true,
		what: "runs imgproc.Grayscale on random 37x53 uint8 RGB and RGBA images and cv2.cvtColor (`COLOR_RGB2GRAY`, `COLOR_RGBA2GRAY`) on the same pixels, and requires identical bytes: **bit-identical** (both BT.601 in 15-bit fixed point). It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/filter_test.go", fn: "TestGaussianBlurMatchesOpenCV",
		ops: []string{"imgproc.GaussianBlur"}, outputs: true,
		what: "runs imgproc.GaussianBlur on random 45x61 uint8 and float32 images of 1, 3 and 4 channels with sigma 0.5, 1, 2.5 and 6, and cv2.GaussianBlur with ksize 2r+1 (r = ceil(3 sigma)) and `BORDER_REPLICATE`, and the exact Gaussian (cv2.sepFilter2D in float64): uint8 **at most 2 levels apart in at most 30% of the elements** (OpenCV's 8-bit kernel strays up to about 1.9 from the exact blur, GaussianBlur at most 0.6, which it checks); float32 (values in [0, 255)) **at most 1e-4 apart**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/filter_test.go", fn: "TestSobelMatchesOpenCV",
		ops: []string{"imgproc.Sobel"}, outputs: true,
		what: "runs imgproc.Sobel on random 39x53 uint8 and float32 images of 1, 3 and 4 channels, and cv2.Sobel (`CV_32F`, ksize 3, `BORDER_REPLICATE`) dx and dy with the magnitude in NumPy, rounded as Sobel rounds on uint8: uint8 **bit-identical**; float32 (values in [0, 255)) **at most 2.5e-4 apart**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/filter_test.go", fn: "TestUnsharpMaskMatchesOpenCV",
		ops: []string{"imgproc.UnsharpMask"}, outputs: true,
		what: "runs imgproc.UnsharpMask on random 41x57 uint8 and float32 images of 1, 3 and 4 channels (sigma 1.5, 0.8 and 2; amount 1, 2.5 and 0.7; threshold 0, 0 and 6), and cv2.GaussianBlur (ksize 2r+1, `BORDER_REPLICATE`), cv2.addWeighted(img, 1+amount, blurred, -amount, 0) and the threshold mask in NumPy: uint8 **at most floor(amount + 1) levels apart in at most 20% of the elements**, leaving out those within 1 of the threshold (the blurs differ by at most 1 there, which it checks); float32 (values in [0, 255)) **at most 1e-4 (1 + amount) apart**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/filter_test.go", fn: "TestResizeMatchesOpenCV",
		ops: []string{"imgproc.Resize"}, outputs: true,
		what: "runs imgproc.Resize with each interp on random 38x54 uint8 and float32 images of 1, 3 and 4 channels, grown (to 80x101 and 76x108), shrunk (to 19x27, half, 17x23 and 12x9) and both (61x20), and cv2.resize with the matching flag (`INTER_NEAREST_EXACT`, `INTER_LINEAR`, `INTER_CUBIC`, `INTER_AREA`): nearest **bit-identical**; linear uint8 **at most 1 level apart in at most 20% of the elements**, float32 (values in [0, 255)) **at most 1e-3**; cubic uint8 **1 level in at most 10%**, float32 **1e-3**; area uint8 **1 level in at most 12%**, float32 **1e-4**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/filter_test.go", fn: "TestResizeNearestAndArea",
		ops: []string{"imgproc.Resize"}, outputs: true,
		what: "checks imgproc.Resize's nearest and area on small rows against the pixels OpenCV's formulas pick (`INTER_NEAREST_EXACT`: 8 to 3 pixels take 1, 3, 6, 8 to 4 take 0, 2, 4, 6; `INTER_AREA`: box averages by overlap when shrinking, its bilinear coordinates when growing), without running OpenCV; TestResizeMatchesOpenCV compares with OpenCV directly.",
	},
	{
		file: "plugins/imgproc/convert_test.go", fn: "TestCastMatchesOpenCV",
		ops: []string{"imgproc.Cast"}, outputs: true,
		what: "converts 20000 random values of each of uint8, int16, uint16, int32, float16 and float32 (ties, limits, infinities, NaNs and arbitrary float bits mixed in) to every other of these dtypes and compares integer and float32 targets with cv2.add(x, 0, dtype=depth) (saturate_cast), float16 targets with cv2.convertFp16 and with numpy's astype(float16), float16 sources widened by cv2.convertFp16: **bit-identical** (NaNs compared as NaN), except float-to-integer conversions of NaN and of values beyond int32's range, where OpenCV goes through INT_MIN and Cast gives 0 for NaN and saturates otherwise by definition; the test checks those against Cast's definition and logs their count. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/convert_test.go", fn: "TestNormalizeMatchesOpenCV",
		ops: []string{"imgproc.Normalize"}, outputs: true,
		what: "normalizes random 29x41 uint8 and float32 images with 1, 3 and 4 channels (per-channel mean and std, scale 1.5, shift 0.25) and compares with cv2.subtract, cv2.multiply by float32(scale/std) and cv2.add with per-channel Scalars on the image in float32, and the float16 output with numpy's astype(float16) of that: **bit-identical** (tolerance zero). It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/convert_test.go", fn: "TestCropMirrorNormalizeMatchesOpenCV",
		ops: []string{"imgproc.CropMirrorNormalize"}, outputs: true,
		what: "crops a centred 40x30 window of random 64x48 uint8 and float32 RGB images, mirrored (cv2.flip) and not, and compares CHW float32 with cv2.dnn.blobFromImage(crop, scalefactor=1/std, mean=mean) for one std, CHW float16 with numpy's astype(float16) of the blob, HWC float32 with the blob transposed, and per-channel std with cv2.subtract and cv2.multiply in float32: **bit-identical** (tolerance zero). It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/geometry_test.go", fn: "TestRotateMatchesOpenCV",
		ops: []string{"imgproc.Rotate"}, outputs: true,
		what: "rotates random uint8 and float32 images (37x53 with 1 and 3 channels, 29x30 with 4, 40x17 with 3) by 90, 180, 270, -90 and 450 degrees and compares with cv2.rotate (`ROTATE_90_COUNTERCLOCKWISE`, `ROTATE_180`, `ROTATE_90_CLOCKWISE`), and by 11 other angles (17.5, 33, -71.3, 123.4, 200, 300.7, 45, 30, 1, -0.5, 359.75), with and without keep_size and with a fill per channel, and compares with cv2.warpAffine (`INTER_LINEAR`, `BORDER_CONSTANT`, the fill as borderValue) of cv2.getRotationMatrix2D about ((W-1)/2, (H-1)/2) plus the translation to the operator's canvas: 216 rotations, every element required equal: **bit-identical**, uint8 and float32 (both OpenCV's 5-bit fixed-point coordinates; the plugin's own cos and sin could differ from libm's in the last bit, which none of these cases shows). It skips without python3-opencv.",
	},
	{
		file: "plugins/image/crop_test.go", fn: "TestCropMatchesOpenCV",
		ops: []string{"image.Crop"}, outputs: true,
		what: "crops random 17x23 uint8 and float32 RGB images at an absolute corner, centred, anchored by crop_pos_x and crop_pos_y, by rel_width and rel_height, at a random corner (seed 42) and whole, and compares each with the NumPy slice img[y:y+h, x:x+w] that OpenCV crops with, the corner and size computed from the package doc's formulas: identical bytes and shapes, **bit-identical**. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/color_test.go", fn: "TestColorConvertMatchesOpenCV",
		ops: []string{"imgproc.ColorConvert"}, outputs: true,
		what: "runs imgproc.ColorConvert on a 4096x4096 uint8 image holding each of the 2^24 colours once and cv2.cvtColor on the same pixels: RGB to BGR and back, RGB and BGR to gray (`COLOR_RGB2GRAY`, `COLOR_BGR2GRAY`), to YCbCr (`COLOR_RGB2YCrCb`, `COLOR_BGR2YCrCb`, Cb and Cr swapped) and to HSV (`COLOR_RGB2HSV`, `COLOR_BGR2HSV`), the same image read as every Y, Cb, Cr to RGB and BGR (`COLOR_YCrCb2RGB`, `COLOR_YCrCb2BGR`) and as every H, S, V to RGB and BGR (`COLOR_HSV2RGB`, `COLOR_HSV2BGR`); 1024x1024 gray to RGB (`COLOR_GRAY2RGB`); and a random 37x64 RGBA image to BGRA, gray, YCbCr and HSV, alpha kept. It requires identical bytes: **bit-identical**, except HSV to RGB and BGR on a CPU without AVX2 and FMA, where OpenCV's SSE build rounds 1 - s·f twice and **within 1** is allowed. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/color_test.go", fn: "TestColorConvertFloatMatchesOpenCV",
		ops: []string{"imgproc.ColorConvert"}, outputs: true,
		what: "runs imgproc.ColorConvert on random 48x64 float32 images (RGB in [0, 1] with a row of greys; HSV with H in [0, 360) degrees, S and V in [0, 1]) and cv2.cvtColor with the same codes as the uint8 comparison, and requires RGB to BGR and gray to RGB **bit-identical**, gray and YCbCr both ways **within 5e-7**, and HSV both ways **bit-identical** on a CPU with AVX2 and FMA, else within 4e-5 (H, degrees) and 1e-6. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/color_test.go", fn: "TestColorTwistMatchesOpenCV",
		ops: []string{"imgproc.ColorTwist"}, outputs: true,
		what: "runs imgproc.ColorTwist on random 64x96 uint8 and float32 RGB images with nine settings of brightness, contrast, saturation and hue, and cv2.transform with the 3x4 matrix of DALI's definition computed by the test in NumPy (float64). uint8: **within 1** of cv2.transform (whose 10-bit fixed-point coefficients round differently), and within 1 on at most 0.1% of values of the float64 product rounded to nearest; float32: **within 1e-6** of cv2.transform. It skips without python3-opencv.",
	},
	{
		file: "plugins/image/image_test.go", fn: "TestGrayscaleUint8",
		ops: []string{"image.Grayscale"}, outputs: true,
		what: "checks image.Grayscale on pure red, green, blue, white, black and a mixture against the exact luma rounded, which is what OpenCV's cvtColor computes there (76, 150, 29, 255, 0, 18); image.Grayscale is bit-identical to imgproc.Grayscale, which TestGrayscaleMatchesOpenCV compares with OpenCV directly.",
	},
	{
		file: "plugins/codec/depth16_test.go", fn: "TestDecode16BitMatchesOpenCV",
		ops: []string{"codec.Decode"}, outputs: true,
		what: "decodes random 21x11 16-bit RGB and RGBA PNGs with dtype uint16 and compares with cv2.imdecode(`IMREAD_UNCHANGED`), its BGR(A) reordered to RGB(A): **bit-identical**. It skips without python3-opencv.",
	},
	{
		file: "plugins/image/opencv_test.go", fn: "TestPointwiseMatchesOpenCV",
		ops: []string{"image.Invert", "image.Adjust", "image.Gamma", "image.ToFloat"}, outputs: true,
		what: "runs the operators on all 256 uint8 values: image.Invert against cv2.bitwise_not, **bit-identical**; image.Adjust (4 contrast and brightness pairs) against cv2.addWeighted(x, c, x, 0, 128 - 128c + b), identical except within 0.01 of a half, where OpenCV rounds in float32 to even, **within 1** there; image.Gamma (0.8, 2.2, 0.45) against cv2.LUT with numpy's round(255·(i/255)^(1/g)), identical except at exact halves; image.ToFloat against cv2.multiply(x, 1, scale=s, dtype=CV_32F), **bit-identical**. It skips without python3-opencv.",
	},
	{
		file: "plugins/image/opencv_test.go", fn: "TestResizeMatchesOpenCV",
		ops: []string{"image.Resize"}, outputs: true,
		what: "resizes a photo-like 61x47 RGB image to 30x23, 128x100 and 61x20 and compares with cv2.resize (`INTER_LINEAR`): **within 1**, in under 15% of the values (about 13% measured: OpenCV's 11-bit fixed-point weights against float32). It skips without python3-opencv.",
	},
	{
		file: "plugins/image/opencv_test.go", fn: "TestDecodeMatchesOpenCV",
		ops: []string{"image.Decode"}, outputs: true,
		what: "decodes a 64x48 PNG and a quality-90 JPEG of a photo-like image and compares with cv2.imdecode (BGR reordered): PNG **bit-identical**; JPEG **within 40** at hard colour edges and 3.5 on average (37 and 3.3 measured: Go's image/jpeg replicates chroma, OpenCV's libjpeg-turbo interpolates it). It skips without python3-opencv.",
	},
	{
		file: "plugins/image/opencv_test.go", fn: "TestEncodeMatchesOpenCV",
		ops: []string{"image.Encode"}, outputs: true,
		what: "encodes a photo-like 64x48 RGB image: the PNG, read back by cv2.imdecode, is **bit-identical**; the quality-90 JPEG, read back by OpenCV, is **within 12** of what OpenCV reads back of cv2.imencode's own quality-90 JPEG, and within 1 on average (5 and 0.43 measured). It skips without python3-opencv.",
	},
	{
		file: "plugins/codec/opencv_test.go", fn: "TestCodecMatchesOpenCV",
		ops: []string{"codec.Decode", "codec.Encode"}, outputs: true,
		what: "on a photo-like 64x48 image: codec.Decode of PNG and lossless WebP is cv2.imdecode's pixels **bit-identical**; of a quality-90 JPEG **within 64** at hard colour edges and 3.5 on average (59 and 2.9 measured: codec.Decode replicates chroma as Go's image/jpeg does, OpenCV interpolates it); codec.Encode's quality-90 JPEG has OpenCV's quantisation tables, is within 5% of the size of cv2.imencode's and decodes with a mean error against the source within 5% of its (5.37 against 5.31 measured); its PNG reads back bit-identical. It skips without python3-opencv.",
	},
	{
		file: "plugins/imgproc/saxpy_opencv_test.go", fn: "TestSaxpyMatchesOpenCV",
		ops: []string{"imgproc.Saxpy"}, outputs: true,
		what: "runs imgproc.Saxpy on 100003 random float32 pairs with a = 1, -2.5 and 0.3 and compares with cv2.scaleAdd(x, a, y): **bit-identical** for a = 1; otherwise **within |a·x|·2⁻²³ + |out|·2⁻²³** (OpenCV fuses the multiply and the add, Saxpy rounds the product first; 18% to 28% of the values differ, by up to 0.99 of that bound). It skips without python3-opencv.",
	},
	{
		file: "plugins/blas/opencv_test.go", fn: "TestMatMulMatchesOpenCV",
		ops: []string{"blas.MatMul"}, outputs: true,
		what: "runs blas.MatMul on random float32 matrices (1x1, 7x13 by 13x5 with and without both transposes, 64x64 by 64x64 with transpose_b, 257x129 by 129x65 with transpose_a), with bias, relu and alpha 1, -2, 0.5 and 1.5, and compares with cv2.gemm (`GEMM_1_T`, `GEMM_2_T`, the bias tiled into src3 with beta 1, relu as np.maximum) and with numpy's float32 matmul: **within twice (k+5)·2⁻²⁴·(Σ|alpha·a·b| + |bias|)** of each per element, the bound within which each is of the exact product. It skips without python3-opencv.",
	},
	{
		file: "bench/codec_test.go", fn: "BenchmarkJPEGCodec",
		ops:  []string{"codec.Decode", "codec.Encode"},
		what: "decodes a generated 1920x1080 JPEG photo to RGB and encodes it again at quality 90, alternating with cv2.imdecode and cv2.imencode (bench/peers/opencv/codec.py, one thread), and reports each one's milliseconds per image and dynop's time over OpenCV's (issue 24's goal: at most 1.1x each); the pixels and files are not compared. `make bench` records the numbers in docs/PERFORMANCE.md.",
	},
	{
		file: "bench/mainjob_test.go", fn: "BenchmarkMainJob",
		ops:  []string{"image.Decode", "codec.Decode", "imgproc.Resize", "imgproc.GaussianBlur", "image.Encode", "codec.Encode"},
		what: "runs the main job (internal/testimage.MainJob: image.Decode, imgproc.Resize to 960x540, imgproc.GaussianBlur with sigma 2, JPEG quality 90 out; with the native codec plugin its passes decode and encode with codec.Decode and codec.Encode) over 50 generated 1920x1080 JPEG photos, alternating with cv2.imread, cv2.resize (`INTER_LINEAR`), cv2.GaussianBlur and cv2.imwrite (bench/peers/opencv/mainjob.py, one thread), and reports images/s and dynop's rate over OpenCV's; the images are not compared. `make bench` records the numbers in docs/PERFORMANCE.md.",
	},
}

// noCounterpart says, for the operators that OpenCV has nothing like,
// why there is nothing to compare; what they are checked against
// instead is said in their tests.
var noCounterpart = map[string]string{
	"image.Read":  "it reads files' bytes, which cv2.imread does not return (it decodes them); TestReadDecode checks the bytes read against the files.",
	"image.Write": "it writes bytes to files, which cv2.imwrite does not take (it encodes pixels); its tests read the files back.",
	"npy.Encode":  "OpenCV writes no NumPy files; its tests read the files back with numpy.load.",
}

// checkOpenCV checks the table [openCV] against the repository's tests
// under root and returns its comparisons by operator name, for the
// operators ops of the host; missing are the plugins not built, whose
// operators the table may name.
func checkOpenCV(root string, ops []op.Entry, missing []Missing) (map[string][]comparison, error) {
	found, err := findOpenCVTests(root)
	if err != nil {
		return nil, err
	}
	var errs []string
	for _, key := range found {
		if !slices.ContainsFunc(openCV, func(c comparison) bool { return c.file+": "+c.fn == key }) {
			errs = append(errs, fmt.Sprintf("%s mentions OpenCV, and the openCV table of internal/tools/opdocs does not say what it compares: add it", key))
		}
	}
	byOp := map[string][]comparison{}
	for _, c := range openCV {
		if !slices.Contains(found, c.file+": "+c.fn) {
			errs = append(errs, fmt.Sprintf("the openCV table of internal/tools/opdocs names %s: %s, which is not there or no longer mentions OpenCV", c.file, c.fn))
		}
		for _, name := range c.ops {
			known := slices.ContainsFunc(ops, func(e op.Entry) bool { return e.Schema.Name == name })
			notBuilt := slices.ContainsFunc(missing, func(m Missing) bool {
				return m.ID == "dynop.plugin."+name[:strings.LastIndexByte(name, '.')]
			})
			if !known && !notBuilt {
				errs = append(errs, fmt.Sprintf("the openCV table of internal/tools/opdocs names operator %s for %s, and there is no such operator", name, c.fn))
			}
			byOp[name] = append(byOp[name], c)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(noCounterpart)) {
		switch {
		case !slices.ContainsFunc(ops, func(e op.Entry) bool { return e.Schema.Name == name }):
			errs = append(errs, fmt.Sprintf("the noCounterpart table of internal/tools/opdocs names operator %s, and there is no such operator", name))
		case len(byOp[name]) > 0:
			errs = append(errs, fmt.Sprintf("the noCounterpart table of internal/tools/opdocs says OpenCV has nothing like %s, and %s compares it with OpenCV: drop the entry", name, byOp[name][0].fn))
		}
	}
	if errs != nil {
		return nil, fmt.Errorf("comparisons with OpenCV:\n\t%s", strings.Join(errs, "\n\t"))
	}
	return byOp, nil
}

// findOpenCVTests returns "file: Func" for every test, benchmark, fuzz
// target and example function under root (nested modules such as bench
// included, this generator's own tests not) whose doc comment or body
// mentions OpenCV or cv2, in any case, sorted.
func findOpenCVTests(root string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if rel, err := filepath.Rel(root, path); err == nil && slices.Contains(skipDirs, filepath.ToSlash(rel)) {
				return filepath.SkipDir
			}
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lower := strings.ToLower(string(src))
		if !strings.Contains(lower, "opencv") && !strings.Contains(lower, "cv2") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !isTestName(fd.Name.Name) {
				continue
			}
			start := fd.Pos()
			if fd.Doc != nil {
				start = fd.Doc.Pos()
			}
			text := strings.ToLower(string(src[fset.Position(start).Offset:fset.Position(fd.End()).Offset]))
			if strings.Contains(text, "opencv") || strings.Contains(text, "cv2") {
				found = append(found, filepath.ToSlash(rel)+": "+fd.Name.Name)
			}
		}
		return nil
	})
	slices.Sort(found)
	return found, err
}

// skipDirs are packages whose tests mention OpenCV without comparing an
// operator with it: the generator's own (which test this check) and
// internal/cvtest (which tests the helper that runs OpenCV).
var skipDirs = []string{"internal/tools/opdocs", "internal/cvtest"}

func isTestName(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
