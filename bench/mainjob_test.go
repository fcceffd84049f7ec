package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/testimage"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/plugin"
	imageplugin "github.com/dynop/dynop/plugins/image"
)

// BenchmarkMainJob runs issue 23's main job (testimage.MainJob) over 50
// generated 1920x1080 JPEG photos with dynop on one worker and on two
// (decoding and encoding with the native codec plugin where it builds),
// and with OpenCV (python3-opencv, one thread, in one Python process
// started once), alternating in one loop, and reports each one's
// images/s, two workers over one (the goal: at least 1.8x on two cores)
// and dynop's rate over OpenCV's. Without python3-opencv it runs dynop
// alone.
func BenchmarkMainJob(b *testing.B) {
	python := openCVPython(b)
	in, pipes := jobPipelines(b, testimage.MainJob, 50)
	var cv *openCV
	if python != "" {
		cv = startOpenCV(b, python, in)
		defer cv.close()
	}

	var peer func() time.Duration
	if cv != nil {
		peer = func() time.Duration { return cv.run(b, 50) }
	}
	dynopTime, cvTime, images := alternate(b, pipes, peer)
	perSec := func(d time.Duration) float64 { return float64(images) / d.Seconds() }
	b.ReportMetric(perSec(dynopTime[0]), "dynop1-images/s")
	b.ReportMetric(perSec(dynopTime[1]), "dynop2-images/s")
	b.ReportMetric(dynopTime[0].Seconds()/dynopTime[1].Seconds(), "speedup")
	if cv != nil {
		b.ReportMetric(perSec(cvTime), "opencv-images/s")
		b.ReportMetric(cvTime.Seconds()/dynopTime[0].Seconds(), "x-opencv-1worker")
		b.ReportMetric(cvTime.Seconds()/dynopTime[1].Seconds(), "x-opencv-2workers")
	}
}

// alternate runs the pipelines, one worker then two, and peer (if not
// nil) in turn, once to warm up (the page cache, every side's first
// calls) and then for each round of b.Loop; it returns the time each
// took in all, and the images one run of the pipelines wrote in all.
func alternate(b *testing.B, pipes [2]*pipeline.Pipeline, peer func() time.Duration) (dynop [2]time.Duration, peerTime time.Duration, images int) {
	round := func() {
		for i, p := range pipes {
			start := time.Now()
			sum, err := p.Run(ctx)
			if err != nil {
				b.Fatal(err)
			}
			dynop[i] += time.Since(start)
			if i == 0 {
				images += sum.Images
			}
		}
		if peer != nil {
			peerTime += peer()
		}
	}
	round()
	dynop, peerTime, images = [2]time.Duration{}, 0, 0
	for b.Loop() {
		round()
	}
	return dynop, peerTime, images
}

// jobPipelines writes n generated 1920x1080 JPEG photos into a new
// directory's in/ and the pipeline job beside them, and compiles the job
// for one worker and for two on a host with imgproc and, where it
// builds, the native codec plugin (whose passes replace image.Decode and
// image.Encode); it returns the photos' directory and the pipelines,
// closed when the benchmark ends.
func jobPipelines(b *testing.B, job string, n int) (string, [2]*pipeline.Pipeline) {
	dir := b.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := testimage.WriteJPEGs(in, n, 1920, 1080); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(file, []byte(job), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	paths := []string{imgprocNative(b)}
	if codec, err := codecNative(b); err != nil {
		b.Logf("no native codec plugin (%v): dynop decodes and encodes with Go's image/jpeg", err)
	} else {
		paths = append(paths, codec)
	}
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{imageplugin.New()}, NoRegistered: true,
		Paths: paths, NoDefaultPaths: true, CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(ctx) })
	spec, err := pipeline.Load(file)
	if err != nil {
		b.Fatal(err)
	}
	var pipes [2]*pipeline.Pipeline
	for i := range pipes {
		if pipes[i], err = pipeline.Compile(ctx, h, spec, pipeline.Options{Workers: i + 1, OutDir: b.TempDir()}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { pipes[i].Close() })
	}
	return in, pipes
}

// openCVPython returns a python3 that imports cv2 (Debian's first, which
// python3-opencv is for), or "" with a note when there is none.
func openCVPython(b *testing.B) string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cv2").Run() == nil {
			return py
		}
	}
	b.Log("no python3 imports cv2 (apt-get install python3-opencv): dynop alone")
	return ""
}

// pyPeer is a Python process (of peers/opencv, or python/bench.py) that
// answers one line of numbers for each line it is given.
type pyPeer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
}

func startPeer(b *testing.B, python, script string) *pyPeer {
	return startPeerCmd(b, exec.Command(python, script))
}

// startPeerCmd starts cmd as a pyPeer.
func startPeerCmd(b *testing.B, cmd *exec.Cmd) *pyPeer {
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return &pyPeer{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}
}

// ask sends the request line and scans the answer into vals.
func (p *pyPeer) ask(b *testing.B, request string, vals ...any) {
	if _, err := fmt.Fprintln(p.stdin, request); err != nil {
		b.Fatal(err)
	}
	line, err := p.stdout.ReadString('\n')
	if err != nil {
		b.Fatalf("the Python peer: %v", err)
	}
	if _, err := fmt.Sscan(line, vals...); err != nil {
		b.Fatalf("the Python peer answered %q: %v", line, err)
	}
}

func (p *pyPeer) close() {
	p.stdin.Close()
	p.cmd.Wait()
}

// openCV is the Python process of peers/opencv/mainjob.py.
type openCV struct {
	*pyPeer
	in, out string
}

func startOpenCV(b *testing.B, python, in string) *openCV {
	return &openCV{pyPeer: startPeer(b, python, "peers/opencv/mainjob.py"), in: in, out: b.TempDir()}
}

// run runs the job once and returns the time Python measured.
func (c *openCV) run(b *testing.B, want int) time.Duration {
	var secs float64
	var n int
	c.ask(b, c.in+" "+c.out, &secs, &n)
	if n != want {
		b.Fatalf("the OpenCV peer ran over %d images, want %d", n, want)
	}
	return time.Duration(secs * float64(time.Second))
}
