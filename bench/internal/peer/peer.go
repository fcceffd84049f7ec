// Package peer builds and starts the peers of dynop's call-overhead
// benchmark, the plugin mechanisms it is compared with: Go's standard
// plugin package (StdPlugin) and github.com/hashicorp/go-plugin over
// net/rpc (GoPlugin). Each builds its peer from the sources under peers/
// of the bench module with the go command that built the running binary,
// so that a benchmark measures today's code and needs no prebuilt files.
package peer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"plugin"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/dynop/dynop/bench/peers/rpcnop"
)

// benchModule is the module path of the bench module, whose root the peers
// are built in.
const benchModule = "github.com/dynop/dynop/bench"

// The peers' packages, relative to the bench module's root, and the names
// of the files they are built into.
const (
	stdPluginPkg  = "./peers/stdplugin"
	stdPluginFile = "stdplugin.so"
	rpcNopPkg     = "./peers/rpcnop/cmd/rpcnop-plugin"
	rpcNopFile    = "rpcnop-plugin"
)

// The peers as errors name them.
const (
	stdPluginPeer = "the standard-library plugin peer"
	goPluginPeer  = "the go-plugin peer"
)

// outputLines is how many of the go command's last lines of output a build
// error quotes.
const outputLines = 20

// std is the standard-library plugin peer this process loaded: the runtime
// loads a plugin once and never unloads it, and refuses a second copy of
// the same plugin from another file ("plugin already loaded").
var std struct {
	sync.Mutex
	path   string            // the file loaded
	sum    [sha256.Size]byte // its hash
	plugin *plugin.Plugin    // the plugin
	nop    func()            // its Nop; nil until one is loaded
}

// StdPlugin builds ./peers/stdplugin of the bench module with
// go build -buildmode=plugin into dir, opens it with plugin.Open and
// returns its Nop.
//
// The plugin must be built as this binary was: by the same toolchain (the
// go command of runtime.GOROOT, else the one in $PATH) and with the same
// flags. It is built with the race detector if this binary was, and with
// the flags that change how packages compile that this binary's build
// information records (-trimpath, -tags, -gcflags, -asan, -msan); the
// environment (GOFLAGS, GOEXPERIMENT, …) carries the rest to both.
//
// A process can load the plugin only once, so a later call builds it again
// into its dir and, if the build is the same file as the one loaded,
// returns the loaded Nop; if it is not, it fails.
func StdPlugin(ctx context.Context, dir string) (nop func(), err error) {
	flags := append([]string{"-buildmode=plugin"}, hostFlags()...)
	path := filepath.Join(dir, stdPluginFile)
	if err := build(ctx, stdPluginPeer, path, stdPluginPkg, flags...); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", stdPluginPeer, err)
	}
	sum := sha256.Sum256(data)

	std.Lock()
	defer std.Unlock()
	if std.nop != nil {
		if sum != std.sum {
			return nil, fmt.Errorf("opening %s %s: this process has loaded a different build of it, %s, and a process can load a plugin only once", stdPluginPeer, path, std.path)
		}
		return std.nop, nil
	}
	p, err := plugin.Open(path)
	if err != nil {
		if strings.Contains(err.Error(), "different version of package") {
			return nil, fmt.Errorf("opening %s %s: %w (a plugin must be built by the same toolchain and with the same flags as the binary that loads it; this one is %s, race detector %t)",
				stdPluginPeer, path, err, runtime.Version(), raceEnabled)
		}
		return nil, fmt.Errorf("opening %s %s: %w", stdPluginPeer, path, err)
	}
	sym, err := p.Lookup("Nop")
	if err != nil {
		return nil, fmt.Errorf("opening %s %s: %w", stdPluginPeer, path, err)
	}
	f, ok := sym.(func())
	if !ok {
		return nil, fmt.Errorf("opening %s %s: its Nop is a %T, not a func()", stdPluginPeer, path, sym)
	}
	std.path, std.sum, std.plugin, std.nop = path, sum, p, f
	return f, nil
}

// hostFlags returns the flags of go build that this binary was built with
// and that change how packages compile, which a plugin it loads must be
// built with too: -race, and those its build information records.
func hostFlags() []string {
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return flags
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "-trimpath", "-asan", "-msan":
			if s.Value == "true" {
				flags = append(flags, s.Key)
			}
		case "-tags", "-gcflags":
			if s.Value != "" {
				flags = append(flags, s.Key+"="+s.Value)
			}
		}
	}
	return flags
}

// GoPlugin builds ./peers/rpcnop/cmd/rpcnop-plugin of the bench module into
// dir, starts it with go-plugin (net/rpc), dispenses the Nop and returns a
// function making one RPC call, and stop, which kills the subprocess and
// must always be called.
//
// ctx bounds the build and the start, not the plugin's life, which ends
// with stop. stop is never nil, even with an error, and may be called more
// than once; call fails once the plugin is stopped. Neither go-plugin nor
// the plugin logs anything.
func GoPlugin(ctx context.Context, dir string) (call func() error, stop func(), err error) {
	noop := func() {}
	path := filepath.Join(dir, rpcNopFile+exeSuffix())
	if err := build(ctx, goPluginPeer, path, rpcNopPkg); err != nil {
		return nil, noop, err
	}
	// The plugin lives until stop; ctx may end its start only: if ctx ends
	// before the plugin is started, watch cancels life, which kills it.
	life, end := context.WithCancel(context.Background())
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  rpcnop.Handshake,
		Plugins:          rpcnop.PluginMap,
		Cmd:              exec.CommandContext(life, path),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolNetRPC},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:   "rpcnop",
			Output: io.Discard,
			Level:  hclog.Off,
		}),
	})
	stop = sync.OnceFunc(func() {
		client.Kill()
		end()
	})
	watch := context.AfterFunc(ctx, end)
	rpc, err := client.Client()
	if !watch() { // ctx ended, and with it the plugin
		if err == nil {
			err = context.Cause(ctx)
		} else {
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		}
	}
	if err != nil {
		stop()
		return nil, noop, fmt.Errorf("starting %s %s: %w", goPluginPeer, path, err)
	}

	raw, err := rpc.Dispense(rpcnop.Name)
	if err != nil {
		stop()
		return nil, noop, fmt.Errorf("dispensing the Nop of %s: %w", goPluginPeer, err)
	}
	n, ok := raw.(rpcnop.Nop)
	if !ok {
		stop()
		return nil, noop, fmt.Errorf("dispensing the Nop of %s: got a %T, not an rpcnop.Nop", goPluginPeer, raw)
	}
	return n.Nop, stop, nil
}

// build runs go build -o out with flags on pkg, a package of the bench
// module, in the bench module's root, in this process's environment. what
// names the peer for errors, which quote go's last lines of output.
func build(ctx context.Context, what, out, pkg string, flags ...string) error {
	shown := "go " + strings.Join(append(append([]string{"build"}, flags...), pkg), " ")
	goCmd, err := GoCommand()
	if err != nil {
		return fmt.Errorf("building %s (%s): %w", what, shown, err)
	}
	root, err := moduleRoot()
	if err != nil {
		return fmt.Errorf("building %s (%s): %w", what, shown, err)
	}
	args := append(append([]string{"build", "-o", out}, flags...), pkg)
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = root
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Run(); err != nil {
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return fmt.Errorf("building %s (%s): %w%s", what, shown, err, tail(output.String(), outputLines))
	}
	return nil
}

// tail returns the last n lines of output, after ": " for one line and on
// lines of their own for more; "" if there are none.
func tail(output string, n int) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return ""
	}
	lines := strings.Split(output, "\n")
	if len(lines) == 1 {
		return ": " + lines[0]
	}
	head := ":\n"
	if len(lines) > n {
		head = fmt.Sprintf(": (last %d of %d lines)\n", n, len(lines))
		lines = lines[len(lines)-n:]
	}
	return head + strings.Join(lines, "\n")
}

// GoCommand returns the go command to build with: $GO if it is set (make
// sets it to the go command it runs), else the go command of runtime.GOROOT if there is one, the
// toolchain of this binary as it was built or $GOROOT says, else the go in
// $PATH.
func GoCommand() (string, error) {
	if gocmd := os.Getenv("GO"); gocmd != "" {
		path, err := exec.LookPath(gocmd)
		if err != nil {
			return "", fmt.Errorf("no go command $GO=%s: %w", gocmd, err)
		}
		return path, nil
	}
	//lint:ignore SA1019 the root this binary was built with is the toolchain a plugin it loads must be built by
	root := runtime.GOROOT()
	if root != "" {
		path := filepath.Join(root, "bin", "go"+exeSuffix())
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	path, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command in GOROOT %q or in $PATH: %w", root, err)
	}
	return path, nil
}

// moduleRoot returns the bench module's root directory: the directory two
// above this source file if it holds the module's go.mod, as it does unless
// the binary was built with -trimpath; else the nearest one holding it
// above the working directory, which go test makes a package's.
func moduleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Join(filepath.Dir(file), "..", "..")
		if isBenchModule(dir) {
			return dir, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the bench module %s: %w", benchModule, err)
	}
	for dir := wd; ; {
		if isBenchModule(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("finding the bench module %s: %w", benchModule, errNoModule)
}

// errNoModule says that neither this source file nor the working directory
// lies in the bench module.
var errNoModule = errors.New("neither the source of package peer nor the working directory is in it")

// isBenchModule tells whether dir holds the bench module's go.mod.
func isBenchModule(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`") == benchModule
		}
	}
	return false
}

// exeSuffix is the suffix of executables' names on this system.
func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
