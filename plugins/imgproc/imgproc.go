// Package imgproc describes the example native plugin dynop.plugin.imgproc,
// built from c/imgproc.c into libdynop_imgproc.so (make plugins). Its
// operators run on the CPU, each in three variants compiled into the one
// library: "avx512" (needs avx512f and avx512bw), "avx2" (avx2) and
// "scalar", the portable reference in plain C. The host picks one per
// instance, the first the CPU has (dynop inspect shows which); every variant computes the reference's
// bytes exactly, floats included (the library is built without fused
// multiply-adds). On other architectures than x86 only the scalar variants
// are built.
//
// Images are HWC tensors (height, width, channels) of uint8 or float32,
// with any strides and byte offset (the SIMD paths need each row's pixels
// and channels contiguous and use scalar code for other rows). Borders
// replicate the edge: a pixel outside the image takes the value of the
// nearest edge pixel, (y, x) → (clamp(y, 0, H-1), clamp(x, 0, W-1)).
// Divisions by powers of two are arithmetic shifts of non-negative sums.
//
// [Grayscale] is bit-identical to the Go operator image.Grayscale of
// plugins/image: BT.601 luma of 3- or 4-channel images (alpha ignored) to
// one channel, (9798 R + 19235 G + 3735 B + 16384) >> 15 on uint8 and
// (0.299 R + 0.587 G) + 0.114 B on float32, each product rounded to
// float32. Like image.Grayscale, it takes no arguments. On uint8 it is
// also OpenCV's cv2.cvtColor(COLOR_RGB2GRAY) bit for bit
// (TestGrayscaleMatchesOpenCV): 15-bit coefficients, which OpenCV 4.6
// uses, round every luma to nearest as the 8-bit ones (77, 150, 29)
// did not (pure red came out 77, not 76).
//
// [GaussianBlur] (sigma > 0, at most 256; radius, 0 for ceil(3 sigma), at
// most 1024) blurs 1-, 3- or 4-channel images with a separable Gaussian,
// weights w_i = exp(-i²/(2 sigma²)) / Σ for i in [-r, r], first along rows,
// then along columns; sigma that is not a positive finite number (NaN
// included) is refused. On uint8 the weights are integers k_i = k_-i
// summing to exactly 1<<14 (floors of w_i·2¹⁴, the remainder handed out one
// unit to the centre if it is odd, then one to each pair ±i in order of
// largest fraction, ties to the inner tap), the horizontal pass keeps 6
// fraction bits, t = (Σ k_i p(x+i) + 128) >> 8, and the vertical pass
// rounds, out = (Σ k_i t(y+i) + 1<<19) >> 20. On float32 the weights are
// f_i = float32(w_i), and each pass computes acc = f_0·p(0), then for
// i = 1..r in order acc = acc + f_i·(p(-i) + p(+i)). Outer taps whose
// weight is zero (in the dtype's weights) are skipped. Against OpenCV's
// cv2.GaussianBlur with ksize 2r+1 and BORDER_REPLICATE
// (TestGaussianBlurMatchesOpenCV): uint8 results are at most 2 levels
// apart, in up to 30% of the elements (about 25% at sigma 0.5 and 6, 6%
// at sigma 1), because OpenCV's 8-bit path rounds its kernel to 8
// fraction bits and strays up to about 1.9 levels from the exact
// Gaussian, where GaussianBlur stays within 0.52 of it (checked: at most
// 0.6); float32 results (values in [0, 255)) are at most 1e-4 apart
// (measured 6.1e-5).
//
// [UnsharpMask] (sigma as GaussianBlur's, with its default radius; amount,
// default 1, finite and at least 0; threshold, default 0, at least 0, in
// the input's units) sharpens 1-, 3- or 4-channel images: with b the
// output of GaussianBlur with that sigma, bit for bit, and amount and
// threshold rounded to float32, each element p becomes
// p + amount·(p - b) where |p - b| > threshold, and stays p elsewhere. On
// float32 df = p - b and out = p + amount·df, each operation rounded (a
// NaN difference keeps p). On uint8 df = p - b exactly,
// v = float32(p) + amount·df (the product rounded), clamped to [0, 255],
// and out = int(v + 0.5) in float32: rounded to nearest (ties up) and
// saturated. Against OpenCV (TestUnsharpMaskMatchesOpenCV: the blur of
// cv2.GaussianBlur as above, then cv2.addWeighted(img, 1+amount, blurred,
// -amount, 0) and the threshold mask in NumPy), uint8 results differ by at
// most floor(amount + 1) levels where the blurs differ by 1 (measured: 1
// at amount 1 and 0.7, 3 at amount 2.5, in 6 to 13% of the elements),
// leaving out elements within 1 of the threshold, where the two blurs may
// decide differently; float32 results by at most 1e-4·(1 + amount)
// (measured 1.2e-4 at amount 2.5).
//
// [Sobel] computes, per channel of 1-, 3- or 4-channel images, the
// gradient magnitude of the 3×3 Sobel operators gx = [-1 0 1; -2 0 2;
// -1 0 1] and gy its transpose (as correlations: right column minus left,
// bottom row minus top), separably: S = (p(y-1) + 2 p(y)) + p(y+1) and
// D = p(y+1) - p(y-1) per column x, gx = S(x+1) - S(x-1) and
// gy = (D(x-1) + 2 D(x)) + D(x+1). On uint8 gx and gy are integers and
// out = min(255, int(sqrtf(float32(gx² + gy²)) + 0.5)); on float32
// out = sqrtf(gx·gx + gy·gy), each product rounded. On uint8 it is
// bit-identical to the magnitude of OpenCV's cv2.Sobel (CV_32F, ksize 3,
// BORDER_REPLICATE) dx and dy with that rounding (TestSobelMatchesOpenCV);
// on float32 (values in [0, 255)) within 2.5e-4 of it (measured 1.8e-4),
// its separable sums rounding in another order.
//
// [Resize] resamples 1-, 3- or 4-channel images to an output size given
// as DALI's resize modes, exactly one of: width and/or height (1 to
// 1<<20; one alone keeps the aspect ratio), resize_shorter or
// resize_longer (that side's length, the aspect ratio kept), or scale (in
// (0, 64]: both sides times it); max_size (with any of them but a fixed
// width and height) then caps both sides, keeping the aspect ratio. A
// derived side is round(in·target/base) half away from zero, at least 1:
// a 1920×1080 image to width 256 becomes 256×144. interp chooses the
// interpolation, "linear" (the default), "nearest", "cubic" or "area",
// each cv2.resize's with the flag of that name; antialias (default false)
// widens linear and cubic filters along a side that shrinks. Along each
// axis of in → out pixels, pixel centres aligned, output index d takes:
//
//   - linear: src = ((d + 0.5)·in)/out - 0.5 (float64), clamped to
//     [0, in-1], from pixels i0 = floor(src) and i1 = min(i0+1, in-1)
//     with fraction f = src - i0. On uint8 with w = round(f·2048) (half
//     away from zero), each source row gives h = p0·(2048-wx) + p1·wx and
//     out = (h0·(2048-wy) + h1·wy + 1<<21) >> 22; on float32
//     h = p0·float32(1-fx) + p1·float32(fx), then
//     out = h0·float32(1-fy) + h1·float32(fy), each product rounded.
//   - nearest: OpenCV's INTER_NEAREST_EXACT, the pixel under the output
//     pixel's centre, floor((d + 0.5)·in/out) in OpenCV's 16-bit fixed
//     point: (ifx·d + ifx/2 - 1) >> 16 with ifx = ((in << 16) + out/2) /
//     out, clamped to [0, in-1]. Where (d + 0.5)·in/out is a whole number
//     k, the subtracted 1 picks k-1: 8 pixels to 4 take 0, 2, 4, 6 (not
//     1, 3, 5, 7), 8 to 3 take 1, 3, 6; and the fixed point's rounding
//     can move a pick by one where the exact value lies within about
//     out/65536 pixels of an integer.
//   - cubic: OpenCV's INTER_CUBIC, Keys' cubic with a = -0.75 on pixels
//     i0-1 .. i0+2 around src = ((d + 0.5)·in)/out - 0.5 (not clamped;
//     pixels outside the image replicate the edge), i0 = floor(src), its
//     weights computed in float32 from f = src - i0 as OpenCV does.
//   - area: shrinking (out ≤ in along both axes), the average of the
//     source pixels that the box [d·in/out, (d+1)·in/out) covers, each
//     weighted by its overlap over in/out (exact integer overlaps, the
//     weights float32), as OpenCV's INTER_AREA. Where either side grows,
//     OpenCV's INTER_AREA is bilinear, and so is area, with linear's
//     rounding, from i0 = floor(d·scale) (scale = 1/(out/in)) and
//     f = float32((d+1) - (i0+1)·out/in), 0 if not positive, else its
//     fraction; from i0 = in-1 on, f = 0.
//   - antialias (linear and cubic; refused with nearest and area): along
//     an axis that shrinks, the triangle (linear) or Keys' cubic
//     (a = -0.75) widened by s = in/out, as PIL's and DALI's antialiased
//     resizes: output pixel d has centre c = (d + 0.5)·s and takes source
//     pixels i from max(0, floor(c - R·s + 0.5)) to
//     min(in, floor(c + R·s + 0.5)), R = 1 (linear) or 2 (cubic), weighted
//     by K((i + 0.5 - c)/s), normalized (float64, then float32). DALI's
//     default is antialias true; false, the default here, is what
//     cv2.resize computes and what the main job's benchmark compares
//     with. An axis that does not shrink keeps its filter, and a resize
//     that shrinks neither side is the same as without.
//
// Resize runs cubic, area shrinking and antialiased resizes where a side
// shrinks on one n-tap path: per axis n weights per output index, a
// horizontal pass along rows (acc = p0·w0, then acc = acc + pj·wj for
// j = 1..n-1, in float32), then a vertical pass down columns the same
// way; uint8 inputs are converted to float32 first, and the results
// clamped to [0, 255] and rounded as int(v + 0.5) in float32. Its AVX2
// and AVX-512 variants gather the taps; nearest copies pixels, the same
// scalar code in every variant. Scratch above 1 GiB is refused
// (antialiased shrinks of images millions of pixels wide to a few).
//
// Resize agrees with cv2.resize (TestResizeMatchesOpenCV: random images
// grown, halved, as the main job's 1920×1080 to 960×540, shrunk by other
// factors and both ways at once) as follows. nearest is bit-identical.
// linear uint8 is at most 1 level apart, in up to 15% of the elements
// (OpenCV's SIMD path rounds its sums; halving is bit-identical), float32
// at most 7e-4 (OpenCV's source coordinate is float32). cubic uint8 at
// most 1 level in up to 6% (OpenCV's weights are 11-bit fixed point;
// doubling is bit-identical), float32 at most 8e-4. area uint8 shrinking
// is bit-identical but for 1 level in under 1% of the elements at
// non-integer factors, growing (bilinear) 1 level in up to 8%, float32 at
// most 1.5e-5.
//
// [Rotate] (angle in degrees, counter-clockwise as cv2.getRotationMatrix2D
// and DALI; fill, one value or one per channel, default 0; keep_size,
// default false) rotates 1-, 3- or 4-channel images about their centre.
// The angle a is taken mod 360 into [0, 360), and cos and sin are the
// plugin's own, in double: exact at multiples of 90°, otherwise Taylor
// series of t·(π/180) after an exact reduction to t in [0°, 45°] (within 1
// ulp of libm's on the same argument, and within 6e-16 of libm's cos and
// sin of a·π/180, which OpenCV uses). With keep_size the output is H×W;
// otherwise it holds the whole rotated image, DALI's rule: W' =
// ceil(|cos|·W + |sin|·H - 0.01), H' = ceil(|cos|·H + |sin|·W - 0.01),
// each made one larger where its parity differs from the side it mostly
// comes from (W' from W and H' from H where the angle is within 45° of 0°
// or 180°, inclusive, else W' from H and H' from W): a 1920×1080 image at
// 30° becomes 2204×1896. At 0°, 90°, 180° and 270°, where the output has
// the rotated size (always without keep_size), Rotate moves whole pixels:
// out(y, x) = in(x, W-1-y) at 90°, in(H-1-y, W-1-x) at 180°, in(H-1-x, y)
// at 270°, which is cv2.rotate bit for bit (ROTATE_90_COUNTERCLOCKWISE,
// ROTATE_180, ROTATE_90_CLOCKWISE).
//
// Rotate interpolates every other case bilinearly, with pixel centres on
// integer coordinates (pixel (x, y) covers [x-½, x+½]×[y-½, y+½]) and the
// rotation about c = ((W-1)/2, (H-1)/2), which lands on c' = ((W'-1)/2,
// (H'-1)/2): the forward map is cv2.getRotationMatrix2D(c, angle, 1) plus
// the translation c' - c, and output pixel (x, y) reads the source at
// A·(x, y, 1), A its inverse as cv2.warpAffine computes it (D = 1/(M0·M4 -
// M1·M3), A0 = M4·D, A1 = -M1·D, A3 = -M3·D, A4 = M0·D, A2 = -A0·M2 -
// A1·M5, A5 = -A3·M2 - A4·M5, in double). Coordinates are OpenCV's fixed
// point with 5 fraction bits, rne rounding half to even and >> rounding
// down: X = (rne((A1·y + A2)·1024) + 16 + rne(A0·x·1024)) >> 5 and Y
// likewise with A4, A5 and A3, then ix = X >> 5, fx = X & 31, iy = Y >> 5,
// fy = Y & 31. A neighbour q outside the image takes the fill value (for
// uint8 clamp(rne(fill), 0, 255)), and a pixel none of whose four
// neighbours is inside is the fill value. Otherwise, with W00 =
// (32-fx)(32-fy), W01 = fx(32-fy), W10 = (32-fx)fy and W11 = fx·fy
// (summing to 1024), uint8 gives (W00·q00 + W01·q01 + W10·q10 + W11·q11 +
// 512) >> 10 and float32 ((q00·w00 + q01·w01) + q10·w10) + q11·w11 with
// w = W/1024 (exact) and each product and sum rounded to float32. This is
// cv2.warpAffine with INTER_LINEAR and BORDER_CONSTANT, for uint8 and
// float32 alike, given the same cos and sin (TestRotateMatchesOpenCV).
// Images may be at most 2^18 pixels wide and high.
//
// [Saxpy] (a, default 1) computes out = a·x + y on two float32 tensors of
// the same shape, any rank and layout, as (a·x) + y with the product
// rounded. It runs at memory bandwidth: large arrays are written with
// non-temporal stores.
//
// [Cast] (dtype, required) converts a tensor of any rank, shape and
// strides between uint8, int16, uint16, int32, float16 (IEEE binary16) and
// float32; the same dtype copies the bits. Integers saturate to the
// target's range. Floats go to integers rounded to nearest, ties to even
// (OpenCV's cvRound, numpy's rint: 0.5 → 0, 1.5 → 2, 2.5 → 2, -0.5 → 0),
// then saturated, so ±inf and values beyond the range give its max or
// min, and NaN gives 0. Integers go to float32 rounded to nearest even
// (only int32 beyond 2²⁴ rounds) and to float16 through float32, which is
// exact up to 2²⁴ and infinite in float16 beyond, so one correct
// rounding. float32 to float16 rounds to nearest even, overflows to ±inf
// (from 65520 up), keeps subnormals, and makes a NaN a quiet NaN with its
// sign and top 9 payload bits: F16C's VCVTPS2PH with
// _MM_FROUND_TO_NEAREST_INT, and numpy's astype(np.float16) for all but
// signalling NaNs, which numpy keeps signalling. float16 widens exactly
// (NaNs quieted, as VCVTPH2PS). Against OpenCV 4.6
// (TestCastMatchesOpenCV, 20000 random values of each dtype with ties,
// limits, infinities, NaNs and arbitrary float bits, to every other
// dtype): bit-identical to saturate_cast through cv2.add(x, 0,
// dtype=depth), to cv2.convertFp16 and to numpy's astype(float16), except
// on purpose where OpenCV's float-to-integer path goes through int32: for
// NaN, ±inf and |x| ≥ 2³¹ it gives INT_MIN before saturating (+inf → 0 in
// uint8, NaN → -32768 in int16), where Cast gives 0 for NaN and the
// saturated value otherwise.
//
// [Normalize] (mean and std, lists of 1 value or one per channel, both
// required; scale, default 1; shift, default 0; dtype float32, the
// default, or float16) is DALI's Normalize with given mean and std on HWC
// images, uint8 or float32, of 1 to 64 channels, any strides: per channel
// c, with m = float32(mean_c), inv = float32(scale/std_c) (the float64
// quotient rounded once) and sh = float32(shift), out = ((x - m)·inv) + sh
// in float32, each operation rounded, then stored as float32 or rounded to
// float16 (to nearest even, as [Cast]). std must be above 0, scale/std a
// finite float32, and every value finite. Against OpenCV 4.6
// (TestNormalizeMatchesOpenCV, 1, 3 and 4 channels, uint8 and float32):
// bit-identical to cv2.subtract, cv2.multiply and cv2.add with per-channel
// Scalars in float32, and in float16 to numpy's astype(float16) of that.
//
// [CropMirrorNormalize] is DALI's CropMirrorNormalize on HWC images (uint8
// or float32, 1 to 64 channels, any strides): it crops a window of crop_w ×
// crop_h (0, the default, for the image's width or height) anchored at
// x0 = round(float32(crop_pos_x)·float32(W - crop_w)), likewise y0 with
// crop_pos_y and H, the float32 product rounded half away from zero
// (DALI's CalculateAnchor with roundf; crop_pos in [0, 1], default 0.5,
// centres the window: 21 spare pixels at 0.5 give x0 = 11); mirror
// (default false) flips the window horizontally, output pixel (y, x)
// being input pixel (y0 + y, x0 + crop_w - 1 - x); each value is
// normalized as by [Normalize] (mean, default [0]; std, default [1];
// scale; shift); output_layout "CHW" (the default, as DALI) writes C
// planes of crop_h × crop_w, "HWC" interleaved pixels; dtype float32 or
// float16. A window larger than the image is an error naming both sizes
// under out_of_bounds_policy "error" (the default, as DALI); under "pad"
// its anchor may be negative (roundf(0.5·-5) = -3) and output pixels
// outside the image take fill_values (default [0]; one value, or one per
// channel), written as they are, not normalized, as DALI does. DALI's
// "trim_to_shape" is not offered. Against OpenCV 4.6 (TestCropMirrorNormalizeMatchesOpenCV,
// uint8 and float32 RGB, mirrored with cv2.flip or not): bit-identical to
// cv2.dnn.blobFromImage(crop, scalefactor=1/std, mean=mean) with one std
// for all channels (CHW, and HWC transposed), to cv2.subtract and
// cv2.multiply with per-channel std, and in float16 to numpy's
// astype(float16) of the blob.
//
// Cast, Normalize and CropMirrorNormalize have the same three variants,
// but their "avx2" needs F16C besides AVX2 (every AVX2 CPU we target has
// it; the host checks it, and an AVX2 CPU without it runs "scalar"). They
// vectorize contiguous runs (Normalize and CropMirrorNormalize gather
// strided and mirrored pixels into a buffer first) and, like the other
// operators' variants, compute the scalar reference's bytes exactly.
// [ColorConvert] (from, default "rgb", and to, each one of "rgb", "bgr",
// "gray", "ycbcr" and "hsv") converts uint8 and float32 images between
// colour spaces with OpenCV's definitions (cv2.cvtColor of OpenCV 4.6):
// rgb and bgr to each other (the first and third channels swapped), to
// gray (imgproc.Grayscale's kernels and bytes, COLOR_RGB2GRAY), to ycbcr
// and to hsv; gray, ycbcr and hsv back to rgb and bgr (gray copied to the
// three channels); a space to itself (a copy). Other pairs are refused:
// convert through rgb. From rgb, bgr, ycbcr and hsv the input has 3
// channels, or 4 whose fourth, alpha, is copied to the output's fourth
// (to gray it is dropped, as Grayscale ignores it); from gray, 1. Integer
// shifts below are floors (x >> n is floor(x / 2ⁿ)).
//
//   - ycbcr is full-range BT.601 (JPEG's), OpenCV's COLOR_RGB2YCrCb, but
//     with the channels in the order Y, Cb, Cr. On uint8 (OpenCV's 14-bit
//     fixed point, results clamped to [0, 255]):
//     Y = (4899 R + 9617 G + 1868 B + 8192) >> 14,
//     Cr = ((R - Y)·11682 + (128 << 14) + 8192) >> 14,
//     Cb = ((B - Y)·9241 + (128 << 14) + 8192) >> 14; back, with
//     cb = Cb - 128 and cr = Cr - 128, R = Y + ((22987 cr + 8192) >> 14),
//     G = Y + ((-5636 cb - 11698 cr + 8192) >> 14),
//     B = Y + ((29049 cb + 8192) >> 14). On float32 (values in [0, 1]):
//     Y = (0.299 R + 0.587 G) + 0.114 B, Cr = (R - Y)·0.713 + 0.5,
//     Cb = (B - Y)·0.564 + 0.5; back R = Y + (Cr - 0.5)·1.403,
//     G = (Y + (Cb - 0.5)·-0.344) + (Cr - 0.5)·-0.714,
//     B = Y + (Cb - 0.5)·1.773, in float32 with each product rounded.
//   - hsv on uint8 has H in [0, 180) and S, V in [0, 255], OpenCV's
//     integers: V = max(R, G, B), d = V - min(R, G, B),
//     S = (d·round(2¹²·255/V) + 2048) >> 12, and
//     H = (h·round(2¹²·180/(6d)) + 2048) >> 12 (plus 180 if negative;
//     both tables 0 at 0) with h = G - B where V = R, else B - R + 2d where
//     V = G, else R - G + 4d. Back, h = H, s = S·(1/255) and v = V·(1/255)
//     go through the float32 formula below with 6/180 for hscale and each
//     channel is trunc(x·255) clamped to [0, 255]: truncated, as OpenCV's
//     vector loop does.
//   - hsv on float32 has H in degrees [0, 360) and S, V in [0, 1] (for RGB
//     in [0, 1]): S = d / (|V| + ε) (ε = FLT_EPSILON) and
//     H = h·(60 / (d + ε)) + o, the product and sum rounded once, with h,
//     o = G - B and 360 if G < B else 0 where V = R, B - R and 120 where
//     V = G, else R - G and 240. Back with hscale 6/360: x = H·hscale,
//     p = trunc(x), f = x - p, sector = p - 6·trunc(p/6), t0 = V,
//     t1 = V·(1 - S), t2 = V·(1 - S·f) and t3 = V·(1 - S·(1 - f)) with
//     1 - S·f and 1 - S·(1 - f) rounded once, and (B, G, R) = (t1, t3, t0),
//     (t1, t0, t2), (t3, t0, t1), (t0, t2, t1), (t0, t1, t3), (t2, t1, t0)
//     in sectors 0 to 5. The single roundings are those of the fused
//     multiply-adds of OpenCV's AVX2 build.
//
// ColorConvert runs every conversion in AVX2 and AVX-512 on contiguous
// rows (the single roundings are fused multiply-adds in AVX-512,
// and computed in double and rounded to odd in the others). On uint8
// it is cv2.cvtColor bit for bit over every one of the 2²⁴ colours (and
// every Y, Cb, Cr and H, S, V), HSV to RGB on a CPU with AVX2 and FMA,
// where OpenCV runs the vector loop it follows (within 1 elsewhere).
//
// [ColorTwist] (brightness b, contrast c and saturation s, each default 1,
// and hue h in degrees, default 0) is DALI's ColorTwist on RGB images (3
// channels, or 4 with alpha copied): one affine map per instance, M and t
// below, computed in float64 from DALI's constants and its 12 entries
// rounded to float32, with half 128 for uint8 and 0.5 for float32
// (contrast pivots around mid grey). Each output channel k is
// ((M_k0·R + M_k1·G) + M_k2·B) + t in float32, each product rounded; on
// uint8 clamped to [0, 255] and rounded to nearest, ties to even. b is in
// [0, 100], c and s in [-100, 100], h within ±10⁶. It has AVX2 and AVX-512
// variants for both dtypes.
//
//	M = b·c · Yiq2Rgb · Hue(h) · Sat(s) · Rgb2Yiq,   t = (half - half·c)·b
//	Rgb2Yiq = [.299 .587 .114; .596 -.274 -.321; .211 -.523 .311]
//	Yiq2Rgb = [1 .956 .621; 1 -.272 -.647; 1 -1.107 1.705]
//	Hue(h) = [1 0 0; 0 cos h sin h; 0 -sin h cos h], Sat(s) = diag(1, s, s)
//
// The library also exports its kernels for direct calls from benchmarks:
// dynop_imgproc_gray_u8 and dynop_imgproc_gray_f32 (the scalar Grayscale
// kernels), dynop_imgproc_saxpy_f32 (the scalar Saxpy kernel) and
// dynop_imgproc_saxpy_f32_avx2 and dynop_imgproc_saxpy_f32_avx512, to be
// called only on a CPU that has those features.
//
// The plugin's populate pass imgproc.native-grayscale attaches
// imgproc.Grayscale to graph nodes of kind image.Grayscale, so a graph
// built with the host's passes runs the native kernel where it asked for
// the Go operator; skip the pass (graph.BuildOptions.Skip) to keep the
// Go one.
package imgproc

// PluginID is the plugin's ID.
const PluginID = "dynop.plugin.imgproc"

// Names of the plugin's operators.
const (
	// Grayscale converts RGB(A) images to BT.601 luma, as image.Grayscale.
	Grayscale = "imgproc.Grayscale"
	// GaussianBlur blurs images with a separable Gaussian (arguments sigma
	// and radius).
	GaussianBlur = "imgproc.GaussianBlur"
	// Sobel computes the 3×3 Sobel gradient magnitude of each channel.
	Sobel = "imgproc.Sobel"
	// Resize resizes images (arguments width and height or another size
	// mode, interp and antialias).
	Resize = "imgproc.Resize"
	// Saxpy computes a·x + y on float32 tensors (argument a).
	Saxpy = "imgproc.Saxpy"
	// UnsharpMask sharpens images by their difference from a Gaussian
	// blur (arguments sigma, amount and threshold).
	UnsharpMask = "imgproc.UnsharpMask"
	// Cast converts tensors between uint8, int16, uint16, int32, float16
	// and float32 (argument dtype).
	Cast = "imgproc.Cast"
	// Normalize computes (x - mean)·scale/std + shift per channel of
	// images (arguments mean, std, scale, shift, dtype).
	Normalize = "imgproc.Normalize"
	// CropMirrorNormalize crops, mirrors and normalizes images into CHW or
	// HWC float32 or float16, as DALI's CropMirrorNormalize.
	CropMirrorNormalize = "imgproc.CropMirrorNormalize"
	// Rotate rotates images counter-clockwise about their centre
	// (arguments angle, fill and keep_size).
	Rotate = "imgproc.Rotate"
	// ColorConvert converts images between colour spaces (arguments from
	// and to: rgb, bgr, gray, ycbcr, hsv), as OpenCV's cvtColor.
	ColorConvert = "imgproc.ColorConvert"
	// ColorTwist adjusts brightness, contrast, saturation and hue with one
	// affine colour map, as DALI's ColorTwist.
	ColorTwist = "imgproc.ColorTwist"
)

// NativeGrayscalePass is the name of its populate pass that replaces the
// Go operator image.Grayscale with Grayscale in graphs.
const NativeGrayscalePass = "imgproc.native-grayscale"
