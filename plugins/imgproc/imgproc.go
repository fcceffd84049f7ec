// Package imgproc describes the example native plugin dynop.plugin.imgproc,
// built from c/imgproc.c into libdynop_imgproc.so (make plugins). Its
// operators run on the CPU with C kernels that the library also exports
// for direct calls (dynop_imgproc_gray_u8, dynop_imgproc_gray_f32).
//
// imgproc.Grayscale is bit-identical to the Go operator image.Grayscale of
// plugins/image: BT.601 luma, (77 R + 150 G + 29 B + 128) >> 8 on uint8
// and 0.299 R + 0.587 G + 0.114 B on float32. It accepts the same inputs
// (uint8 or float32 HWC images with 3 or 4 channels) and, like it, no
// arguments.
//
// The plugin's populate pass imgproc.native-grayscale attaches
// imgproc.Grayscale to graph nodes of kind image.Grayscale, so a graph
// built with the host's passes runs the native kernel where it asked for
// the Go operator; skip the pass (graph.BuildOptions.Skip) to keep the
// Go one.
package imgproc

// PluginID is the plugin's ID.
const PluginID = "dynop.plugin.imgproc"

// Grayscale is the name of its grayscale operator.
const Grayscale = "imgproc.Grayscale"

// NativeGrayscalePass is the name of its populate pass that replaces the
// Go operator image.Grayscale with Grayscale in graphs.
const NativeGrayscalePass = "imgproc.native-grayscale"
