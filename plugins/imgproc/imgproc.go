// Package imgproc describes the example native plugin dynop.plugin.imgproc,
// built from c/imgproc.c into libdynop_imgproc.so (make plugins). Its
// operators run on the CPU with C kernels that the library also exports
// for direct calls (dynop_imgproc_gray_u8, dynop_imgproc_gray_f32).
//
// imgproc.Grayscale is bit-identical to the Go operator image.Grayscale of
// plugins/image: BT.601 luma, (77 R + 150 G + 29 B + 128) >> 8 on uint8
// and 0.299 R + 0.587 G + 0.114 B on float32.
package imgproc

// PluginID is the plugin's ID.
const PluginID = "dynop.plugin.imgproc"

// Grayscale is the name of its grayscale operator.
const Grayscale = "imgproc.Grayscale"
