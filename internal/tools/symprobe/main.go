// Command symprobe measures how a native plugin's calls into a library
// it bundles are bound when the host process already exports the same
// symbols: ELF interposition and the ways around it (-Bsymbolic,
// --exclude-libs, visibility, RTLD_DEEPBIND, dlmopen), when
// RTLD_DEEPBIND is unsafe, and what dlmopen namespaces cost. The
// results are written up in docs/symbols.md.
//
// Usage:
//
//	go run ./internal/tools/symprobe [-keep] [-runs N]
//
// It builds the C fixtures in csrc/ with gcc (and g++) into a temporary
// directory, runs the drivers and prints one line per case. The numbers
// come from a dot product: [1,2,3]·[4,5,6] is 32 with the plugin's own
// library; the host's cblas_sdot answers 42 (dot+10) and the host's
// sdot_kernel 132 (dot+100); an impostor with the bundled library's soname
// answers 1032. The program itself uses no cgo; the -race check builds a
// small cgo program in the temporary directory with "go run -race".
package main

import (
	"embed"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

//go:embed csrc/*.c csrc/*.h csrc/*.cpp csrc/race.go.txt
var csrc embed.FS

func main() {
	keep := flag.Bool("keep", false, "keep the temporary directory and print its path")
	runs := flag.Int("runs", 21, "processes per timing (the median is printed)")
	flag.Parse()
	dir, err := os.MkdirTemp("", "symprobe-")
	if err != nil {
		fail(err)
	}
	if *keep {
		fmt.Println("# fixtures in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	p := &probe{dir: dir}
	p.build()
	p.interposition()
	p.safety()
	p.namespaces(*runs)
}

type probe struct {
	dir        string
	sanitizers map[string]bool
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "symprobe:", err)
	os.Exit(1)
}

// sh runs a command in the temporary directory and returns its combined
// output; a failure to build is fatal, a failing run is reported.
func (p *probe) sh(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func (p *probe) must(name string, args ...string) {
	if out, err := p.sh(nil, name, args...); err != nil {
		fail(fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out))
	}
}

func (p *probe) build() {
	if err := os.MkdirAll(filepath.Join(p.dir, "src"), 0o755); err != nil {
		fail(err)
	}
	if err := fs.WalkDir(csrc, "csrc", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := csrc.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(p.dir, "src", filepath.Base(path)), b, 0o644)
	}); err != nil {
		fail(err)
	}
	for _, d := range []string{"host", "base", "imp", "bsym", "prot", "static", "cxx", "tls"} {
		if err := os.MkdirAll(filepath.Join(p.dir, d), 0o755); err != nil {
			fail(err)
		}
	}
	so := []string{"-O2", "-shared", "-fPIC"}
	soname := "-Wl,-soname,libmyblas.so.0"
	rpath := []string{"-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"}
	gcc := func(args ...string) { p.must("gcc", args...) }
	gcc(append(so, "-o", "host/libhostblas.so", "-Wl,-soname,libhostblas.so", "src/hostblas.c")...)
	// The bundled library, and a plugin linked against it (RUNPATH $ORIGIN).
	gcc(append(so, soname, "-o", "base/libmyblas.so.0", "src/myblas.c")...)
	gcc(append(append(so, "-o", "base/plugin.so", "src/plugin.c", "base/libmyblas.so.0"), rpath...)...)
	// An impostor: another library with the same soname.
	gcc(append(so, soname, "-DVARIANT_ADD=1000", "-o", "imp/libmyblas.so.0", "src/myblas.c")...)
	// The plugin and its library linked with -Bsymbolic.
	gcc(append(so, soname, "-Wl,-Bsymbolic", "-o", "bsym/libmyblas.so.0", "src/myblas.c")...)
	gcc(append(append(so, "-Wl,-Bsymbolic", "-o", "bsym/plugin.so", "src/plugin.c", "bsym/libmyblas.so.0"), rpath...)...)
	// The library built with protected visibility.
	gcc(append(so, soname, "-fvisibility=protected", "-o", "prot/libmyblas.so.0", "src/myblas.c")...)
	gcc(append(append(so, "-o", "prot/plugin.so", "src/plugin.c", "prot/libmyblas.so.0"), rpath...)...)
	// The library linked statically into the plugin: exported, with
	// --exclude-libs,ALL, and compiled with hidden visibility.
	gcc("-O2", "-fPIC", "-c", "-o", "static/myblas.o", "src/myblas.c")
	gcc("-O2", "-fPIC", "-fvisibility=hidden", "-c", "-o", "static/myblas-hidden.o", "src/myblas.c")
	p.must("ar", "rcs", "static/libmyblas.a", "static/myblas.o")
	p.must("ar", "rcs", "static/libmyblas-hidden.a", "static/myblas-hidden.o")
	gcc(append(so, "-o", "static/plugin-export.so", "src/plugin.c", "static/libmyblas.a")...)
	gcc(append(so, "-Wl,--exclude-libs,ALL", "-o", "static/plugin-exclude.so", "src/plugin.c", "static/libmyblas.a")...)
	gcc(append(so, "-o", "static/plugin-hidden.so", "src/plugin.c", "static/libmyblas-hidden.a")...)
	// Drivers.
	gcc("-O2", "-o", "driver", "src/driver.c")
	gcc("-O2", "-o", "driver-linked", "src/driver.c", "-Wl,--no-as-needed", "host/libhostblas.so", "-Wl,-rpath,"+filepath.Join(p.dir, "host"))
	gcc("-O2", "-DUSE_ENVIRON", "-o", "driver-environ", "src/driver.c")
	gcc(append(so, "-o", "envplugin.so", "src/envplugin.c")...)
	gcc("-O2", "-o", "mallocdrv", "src/mallocdrv.c")
	gcc("-O2", "-o", "nsdrv", "src/nsdrv.c")
	gcc("-O2", "-o", "nsdrv-cxx", "src/nsdrv.c", "-Wl,--no-as-needed", "-lstdc++") // libstdc++ loaded by the host
	gcc(append(so, "-fno-builtin", "-o", "libcountmalloc.so", "src/countmalloc.c")...)
	gcc(append(so, "-o", "threadplugin.so", "src/threadplugin.c")...)
	p.must("g++", append(so, "-o", "cxx/cxxplugin.so", "src/cxxplugin.cpp")...)
	gcc("-O2", "-c", "-o", "driver.o", "src/driver.c")
	p.must("g++", "-O2", "-DUSE_COUT", "-o", "cxxhost", "driver.o", "src/cxxhost.cpp")
	p.must("g++", "-O2", "-DREPLACE_NEW", "-o", "cxxhost-new", "driver.o", "src/cxxhost.cpp")
	for _, n := range tlsSizes {
		gcc(append(so, "-DTLS_SIZE="+strconv.Itoa(n), "-o", fmt.Sprintf("tls/tls-%d.so", n), "src/tlslib.c")...)
	}
	// Sanitizer builds are optional: libasan/libtsan may be missing.
	p.sanitizers = map[string]bool{}
	for _, s := range []string{"address", "thread"} {
		if _, err := p.sh(nil, "gcc", "-O1", "-fsanitize="+s, "-o", "driver-"+s, "src/driver.c"); err == nil {
			p.sanitizers[s] = true
		}
	}
}

var tlsSizes = []int{64, 256, 1024, 1536, 2048, 4096, 16384}

var ruleRE = regexp.MustCompile(`(?m)^rule=(\w+)`)

var resultRE = regexp.MustCompile(`(?m)^(result|error)=(.*)$`)

// outcome is what a driver printed: the result, or dlopen's error.
func outcome(out string) string {
	m := resultRE.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		return "no result: " + lastLine(ruleRE.ReplaceAllString(out, ""))
	}
	last := m[len(m)-1]
	if last[1] == "error" {
		return "dlopen error: " + last[2]
	}
	return last[2]
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (p *probe) interposition() {
	fmt.Println("## 1. Which cblas_sdot the plugin calls (32 = its own, 42 = the host's cblas_sdot,")
	fmt.Println("##    132 = its own cblas_sdot calling the host's sdot_kernel, 1032 = an impostor with its soname;")
	fmt.Println("##    envplugin: 32 = sees the host's setenv, 42 = reads a stale environ)")
	host := "g:host/libhostblas.so"
	cases := []struct{ name, bin, steps string }{
		{"no host library, plain dlopen", "driver", ":base/plugin.so"},
		{"host dlopens libhostblas RTLD_GLOBAL; plugin RTLD_LOCAL", "driver", host + " :base/plugin.so"},
		{"  ... plugin RTLD_LOCAL|RTLD_DEEPBIND", "driver", host + " d:base/plugin.so"},
		{"  ... plugin and its library linked -Wl,-Bsymbolic", "driver", host + " :bsym/plugin.so"},
		{"  ... library built -fvisibility=protected", "driver", host + " :prot/plugin.so"},
		{"  ... library linked statically, symbols exported", "driver", host + " :static/plugin-export.so"},
		{"  ... library linked statically, -Wl,--exclude-libs,ALL", "driver", host + " :static/plugin-exclude.so"},
		{"  ... library linked statically, built -fvisibility=hidden", "driver", host + " :static/plugin-hidden.so"},
		{"  ... plugin dlmopen(LM_ID_NEWLM)", "driver", host + " n:base/plugin.so"},
		{"executable linked with libhostblas; plugin RTLD_LOCAL", "driver-linked", ":base/plugin.so"},
		{"  ... plugin RTLD_DEEPBIND", "driver-linked", "d:base/plugin.so"},
		{"internal call: library preloaded RTLD_LOCAL, plugin DEEPBIND", "driver", host + " :base/libmyblas.so.0 d:base/plugin.so"},
		{"  ... library preloaded DEEPBIND, plugin DEEPBIND", "driver", host + " d:base/libmyblas.so.0 d:base/plugin.so"},
		{"  ... protected library preloaded RTLD_LOCAL, plugin DEEPBIND", "driver", host + " :prot/libmyblas.so.0 d:prot/plugin.so"},
		{"plugin from a memfd, nothing preloaded", "driver", "m:base/plugin.so"},
		{"library preloaded from a memfd, then plugin from a memfd", "driver", "m:base/libmyblas.so.0 m:base/plugin.so"},
		{"  ... with the host's library global, plugin DEEPBIND", "driver", host + " m:base/libmyblas.so.0 dm:base/plugin.so"},
		{"host setenv, plugin reads environ; host does not read environ", "driver", "e:SYMPROBE_X=1 :./envplugin.so"},
		{"  ... plugin DEEPBIND", "driver", "e:SYMPROBE_X=1 d:./envplugin.so"},
		{"host setenv, plugin reads environ; host reads environ too", "driver-environ", "e:SYMPROBE_X=1 :./envplugin.so"},
		{"  ... plugin DEEPBIND", "driver-environ", "e:SYMPROBE_X=1 d:./envplugin.so"},
		{"impostor with the same soname loaded first (RTLD_LOCAL); plugin", "driver", ":imp/libmyblas.so.0 :base/plugin.so"},
		{"  ... plugin DEEPBIND", "driver", ":imp/libmyblas.so.0 d:base/plugin.so"},
		{"  ... plugin dlmopen(LM_ID_NEWLM)", "driver", ":imp/libmyblas.so.0 n:base/plugin.so"},
	}
	for _, c := range cases {
		out, err := p.sh(nil, "./"+c.bin, append([]string{"-r"}, strings.Fields(c.steps)...)...)
		res := outcome(out)
		if err != nil {
			res += " (" + err.Error() + ")"
		}
		rule := "?"
		if m := ruleRE.FindStringSubmatch(out); m != nil {
			rule = m[1]
		}
		fmt.Printf("%-66s %-14s %-58s rule=%-6s => %s\n", c.name, c.bin, c.steps, rule, res)
	}
	fmt.Println()
}

func (p *probe) safety() {
	fmt.Println("## 2. When RTLD_DEEPBIND is unsafe; rule = deepbind_safe() in csrc/deepbind_safe.h")
	preload := []string{"LD_PRELOAD=" + filepath.Join(p.dir, "libcountmalloc.so")}
	for _, c := range []struct {
		name  string
		env   []string
		steps string
	}{
		{"no interposer, plugin RTLD_LOCAL", nil, ":base/plugin.so"},
		{"LD_PRELOAD counting malloc, plugin RTLD_LOCAL", preload, ":base/plugin.so"},
		{"LD_PRELOAD counting malloc, plugin RTLD_DEEPBIND", preload, "d:base/plugin.so"},
		{"LD_PRELOAD counting malloc, plugin dlmopen", preload, "n:base/plugin.so"},
	} {
		out, _ := p.sh(c.env, "./mallocdrv", c.steps)
		fmt.Printf("### %s\n%s\n", c.name, indent(out))
	}
	for _, s := range []string{"address", "thread"} {
		if !p.sanitizers[s] {
			fmt.Printf("### -fsanitize=%s: not built (runtime missing)\n", s)
			continue
		}
		for _, flags := range []string{"", "d"} {
			out, err := p.sh(nil, "./driver-"+s, "-r", "g:host/libhostblas.so", flags+":base/plugin.so")
			fmt.Printf("### C host built -fsanitize=%s, plugin %q (d = DEEPBIND) (exit: %v)\n%s\n", s, flags, err, indent(out))
		}
	}
	for _, c := range []struct{ name, bin, steps string }{
		{"C host, C++ plugin RTLD_LOCAL", "driver", ":cxx/cxxplugin.so"},
		{"C host, C++ plugin DEEPBIND", "driver", "d:cxx/cxxplugin.so"},
		{"C++ host (uses std::cout), C++ plugin RTLD_LOCAL", "cxxhost", ":cxx/cxxplugin.so"},
		{"C++ host (uses std::cout), C++ plugin DEEPBIND", "cxxhost", "d:cxx/cxxplugin.so"},
		{"C++ host replacing operator new (no iostream), C++ plugin RTLD_LOCAL", "cxxhost-new", ":cxx/cxxplugin.so"},
		{"C++ host replacing operator new (no iostream), C++ plugin DEEPBIND", "cxxhost-new", "d:cxx/cxxplugin.so"},
		{"C host, C++ plugin dlmopen", "driver", "n:cxx/cxxplugin.so"},
	} {
		out, err := p.sh(nil, "./"+c.bin, "-r", c.steps)
		if err != nil {
			out += "\n(exit: " + err.Error() + ")"
		}
		fmt.Printf("### %s\n%s\n", c.name, indent(out))
	}
	p.goRace()
	fmt.Println()
}

// goRace builds a cgo program that loads the plugin with RTLD_DEEPBIND,
// with and without the race detector.
func (p *probe) goRace() {
	rd := filepath.Join(p.dir, "race")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		fail(err)
	}
	src, _ := csrc.ReadFile("csrc/race.go.txt")
	hdr, _ := csrc.ReadFile("csrc/deepbind_safe.h")
	for name, b := range map[string][]byte{"main.go": src, "deepbind_safe.h": hdr, "go.mod": []byte("module raceprobe\n\ngo 1.21\n")} {
		if err := os.WriteFile(filepath.Join(rd, name), b, 0o644); err != nil {
			fail(err)
		}
	}
	for _, race := range []bool{false, true} {
		args := []string{"run"}
		if race {
			args = append(args, "-race")
		}
		args = append(args, ".", filepath.Join(p.dir, "host/libhostblas.so"), filepath.Join(p.dir, "base/plugin.so"))
		cmd := exec.Command("go", args...)
		cmd.Dir = rd
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		fmt.Printf("### Go host (cgo), race=%v, plugin DEEPBIND (exit: %v)\n%s\n", race, err, indent(strings.TrimSpace(string(out))))
	}
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func (p *probe) namespaces(runs int) {
	fmt.Println("## 3. dlmopen namespaces")
	show := func(env []string, args ...string) {
		bin := "./nsdrv"
		if args[0] == "maps-cxx" {
			bin, args[0] = "./nsdrv-cxx", "maps"
		}
		out, err := p.sh(env, bin, args...)
		if err != nil {
			out += " (exit: " + err.Error() + ")"
		}
		fmt.Printf("### %s %s %s\n%s\n", strings.Join(env, " "), bin, strings.Join(args, " "), indent(out))
	}
	show(nil, "count", "base/plugin.so")
	show([]string{"GLIBC_TUNABLES=glibc.rtld.nns=16"}, "count", "base/plugin.so")
	show(nil, "reuse", "base/plugin.so", "200")
	show(nil, "maps", "cxx/cxxplugin.so")
	show(nil, "maps-cxx", "cxx/cxxplugin.so")
	show(nil, "free", "base/plugin.so", "64")
	show(nil, "free", "base/plugin.so", "4096")
	show(nil, "thread", "./threadplugin.so")
	fmt.Println("### initial-exec TLS of N bytes: dlopen / dlmopen (first namespace) / namespaces opened before failure")
	for _, n := range tlsSizes {
		lib := fmt.Sprintf("tls/tls-%d.so", n)
		a, _ := p.sh(nil, "./driver", ":"+lib)
		b, _ := p.sh(nil, "./driver", "n:"+lib)
		c, _ := p.sh(nil, "./nsdrv", "count", lib)
		fmt.Printf("    %6d bytes: %-40s %-40s %s\n", n, short(outcome(a)), short(outcome(b)), c)
	}
	big := []string{"GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536"}
	a, _ := p.sh(big, "./driver", ":tls/tls-16384.so")
	b, _ := p.sh(big, "./driver", "n:tls/tls-16384.so")
	fmt.Printf("    16384 bytes with %s: dlopen %s, dlmopen %s\n", big[0], outcome(a), outcome(b))
	fmt.Printf("### time and RSS of opening base/plugin.so and calling it, median of %d processes\n", runs)
	for _, mode := range []string{"dlopen", "dlmopen"} {
		var us, kib []float64
		for range runs {
			out, _ := p.sh(nil, "./nsdrv", "open", mode, "base/plugin.so")
			var u, k float64
			var r string
			if _, err := fmt.Sscanf(out, "us=%g rss_kib=%g result=%s", &u, &k, &r); err == nil {
				us = append(us, u)
				kib = append(kib, k)
			}
		}
		fmt.Printf("    %-8s %6.0f µs  %5.0f KiB RSS\n", mode, median(us), median(kib))
	}
	if _, err := exec.LookPath("gdb"); err == nil {
		out, _ := p.sh(nil, "gdb", "-nx", "-batch", "-ex", "set breakpoint pending on", "-ex", "break sdot_kernel",
			"-ex", "run", "-ex", "info sharedlibrary", "-ex", "bt", "--args", "./driver", "n:base/plugin.so")
		var keep []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "Breakpoint 1,") || strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		fmt.Printf("### gdb: breakpoint in a library of a dlmopen namespace\n%s\n", indent(strings.Join(keep, "\n")))
	}
}

func short(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}
