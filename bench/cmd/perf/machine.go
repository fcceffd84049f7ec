package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/dynop/dynop/dispatch"
)

// machine describes where the suite ran.
type machine struct {
	CPU      string // model name
	Cores    int
	Memory   string
	OS       string // GOOS/GOARCH and kernel
	Go       string // the go command's version
	Features string // the CPU features dynop's dispatch sees
	Commit   string // the repository's commit, "+dirty" if it has changes
	Date     string
	Count    int           // runs of each benchmark (0: read from a file)
	Quick    bool          // -quick
	Took     time.Duration // wall time of the suite
}

func describeMachine(ctx context.Context, gocmd, root string) machine {
	m := machine{
		CPU:      cpuinfo("model name"),
		Cores:    runtime.NumCPU(),
		OS:       runtime.GOOS + "/" + runtime.GOARCH,
		Go:       output(ctx, "", gocmd, "env", "GOVERSION"),
		Features: dispatch.Detect().String(),
		Date:     time.Now().UTC().Format("2006-01-02"),
	}
	if rel, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += ", Linux " + strings.TrimSpace(string(rel))
	}
	if kb := meminfo("MemTotal"); kb > 0 {
		m.Memory = fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
	}
	m.Commit = output(ctx, root, "git", "rev-parse", "--short", "HEAD")
	if m.Commit != "" && output(ctx, root, "git", "status", "--porcelain", "--untracked-files=no") != "" {
		m.Commit += "+dirty"
	}
	return m
}

// output runs a command and returns its trimmed output, or "" if it
// fails.
func output(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// cpuinfo returns the first value of key in /proc/cpuinfo.
func cpuinfo(key string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// meminfo returns the value in kB of key in /proc/meminfo.
func meminfo(key string) int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && k == key {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb
		}
	}
	return 0
}
