#!/bin/sh
# make.sh regenerates the two fixtures Go cannot write: cmyk.jpg, a CMYK
# (Adobe, YCCK) JPEG, and interlaced.png, an Adam7-interlaced PNG, both
# 40x24 from a gradient libvips draws itself (apt-get install
# libvips-tools). The tests compare the codec with Go's decoders on
# whatever these files hold, so any such image will do.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
vips xyz "$tmp/xy.v" 40 24                                 # two bands: x, y
vips bandjoin_const "$tmp/xy.v" "$tmp/xyz.v" 100           # a third
vips linear "$tmp/xyz.v" "$tmp/rgb.v" "6 10 1" "0 0 0" --uchar
vips copy "$tmp/rgb.v" "$tmp/srgb.v" --interpretation srgb
vips colourspace "$tmp/srgb.v" cmyk.jpg cmyk
vips pngsave "$tmp/srgb.v" interlaced.png --interlace
