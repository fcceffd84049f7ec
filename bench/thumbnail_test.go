package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// thumbnailJob makes 256-pixel-wide JPEG thumbnails, the aspect ratio
// kept: what vipsthumbnail does.
const thumbnailJob = `name: thumbnail
batch_size: 8
inputs:
  photos: {files: [in/]}
operators:
  - {name: decode, op: image.Decode, inputs: [photos]}
  - {name: thumb, op: imgproc.Resize, inputs: [decode], args: {width: 256}}
outputs:
  thumbs: {from: thumb, dir: out, format: jpeg, quality: 90}
`

// BenchmarkThumbnail makes 256-wide JPEG thumbnails (quality 90) of 50
// generated 1920x1080 photos with dynop (image.Decode → imgproc.Resize
// width 256 → JPEG; with the native codec plugin its decode pass shrinks
// JPEGs on load, as libvips does) on one worker and on two, and with
// libvips' vipsthumbnail (libvips-tools; -s 256, one thread:
// VIPS_CONCURRENCY=1, one process for all 50 files, its start included),
// alternating in one loop, and reports images/s and dynop's over
// vipsthumbnail's (issue 24 asks for the ratio). Without vipsthumbnail
// dynop runs alone.
func BenchmarkThumbnail(b *testing.B) {
	vips, _ := exec.LookPath("vipsthumbnail")
	if vips == "" {
		b.Log("no vipsthumbnail (apt-get install libvips-tools): dynop alone")
	}
	in, pipes := jobPipelines(b, thumbnailJob, 50)
	files, _ := filepath.Glob(filepath.Join(in, "*.jpg"))
	vipsOut := b.TempDir()
	var peer func() time.Duration
	if vips != "" {
		peer = func() time.Duration {
			cmd := exec.Command(vips, append([]string{"-s", "256", "-o", filepath.Join(vipsOut, "%s.jpg[Q=90]")}, files...)...)
			cmd.Env = append(os.Environ(), "VIPS_CONCURRENCY=1")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("vipsthumbnail: %v\n%s", err, out)
			}
			return time.Since(start)
		}
	}
	dynopTime, vipsTime, images := alternate(b, pipes, peer)
	perSec := func(d time.Duration) float64 { return float64(images) / d.Seconds() }
	b.ReportMetric(perSec(dynopTime[0]), "dynop1-images/s")
	b.ReportMetric(perSec(dynopTime[1]), "dynop2-images/s")
	if vips != "" {
		b.ReportMetric(perSec(vipsTime), "vips-images/s")
		b.ReportMetric(vipsTime.Seconds()/dynopTime[0].Seconds(), "x-vips-1worker")
	}
}
