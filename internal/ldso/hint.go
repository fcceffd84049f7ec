package ldso

import (
	"strings"
	"unicode"
)

// packageExceptions are sonames whose Debian package the naming rule of
// Debian policy §8.1 does not give.
var packageExceptions = map[string]string{
	"libc.so.6":             "libc6",
	"libm.so.6":             "libc6",
	"libdl.so.2":            "libc6",
	"libpthread.so.0":       "libc6",
	"librt.so.1":            "libc6",
	"libresolv.so.2":        "libc6",
	"libutil.so.1":          "libc6",
	"libmvec.so.1":          "libc6",
	"ld-linux-x86-64.so.2":  "libc6",
	"ld-linux-aarch64.so.1": "libc6",
	"libstdc++.so.6":        "libstdc++6",
	"libgcc_s.so.1":         "libgcc-s1",
	"libjpeg.so.62":         "libjpeg62-turbo",
	"libturbojpeg.so.0":     "libturbojpeg0",
	"libpng16.so.16":        "libpng16-16",
	"libz.so.1":             "zlib1g",
	"libopenblas.so.0":      "libopenblas0",
	"libblas.so.3":          "libblas3",
	"liblapack.so.3":        "liblapack3",
	"libgfortran.so.5":      "libgfortran5",
	"libgomp.so.1":          "libgomp1",
	"libfftw3.so.3":         "libfftw3-double3",
	"libfftw3f.so.3":        "libfftw3-single3",
	"libfftw3l.so.3":        "libfftw3-long3",
	"libwebp.so.7":          "libwebp7",
	"libssl.so.3":           "libssl3",
	"libcrypto.so.3":        "libssl3",
	"libOpenCL.so.1":        "ocl-icd-libopencl1",
	"libcuda.so.1":          "libcuda1",
	"libomp.so.5":           "libomp5",
	"libtbb.so.12":          "libtbb12",
	"libvulkan.so.1":        "libvulkan1",
}

// WithHints lists sonames, comma-separated, each followed by the Debian
// package likely to provide it where [PackageHint] can guess one:
// "libopenblas.so.0 (Debian package libopenblas0), libfoo.so".
func WithHints(sonames []string) string {
	names := make([]string, len(sonames))
	for i, soname := range sonames {
		names[i] = soname
		if pkg := PackageHint(soname); pkg != "" {
			names[i] += " (Debian package " + pkg + ")"
		}
	}
	return strings.Join(names, ", ")
}

// PackageHint returns the Debian package likely to provide soname, "" if
// it cannot guess: a small table of exceptions, else the rule of Debian
// policy §8.1: libfoo.so.N is in libfooN, and libfoo2.so.N (a name that
// ends in a digit) in libfoo2-N; package names are lower case, with '-'
// for '_'.
func PackageHint(soname string) string {
	if pkg, ok := packageExceptions[soname]; ok {
		return pkg
	}
	name, version, ok := strings.Cut(soname, ".so.")
	if !ok || name == "" || version == "" || strings.ContainsAny(soname, "/ ") {
		return ""
	}
	pkg := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
	if unicode.IsDigit(rune(pkg[len(pkg)-1])) {
		pkg += "-"
	}
	pkg += version
	if strings.Trim(pkg, "abcdefghijklmnopqrstuvwxyz0123456789+-.") != "" {
		return "" // not a Debian package name
	}
	return pkg
}
