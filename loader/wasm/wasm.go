// Package wasm loads dynop plugins that are WebAssembly modules, and runs
// them in a sandbox with wazero (pure Go, no cgo).
//
// Importing the package registers its loader with the host, so that .wasm
// files in [dynop.Options.Paths] load:
//
//	import _ "github.com/dynop/dynop/loader/wasm"
//
// A WebAssembly plugin is the same plugin as a native one — info,
// interfaces, operators, lazy start, reference counting, unload — in the
// wasm32 form of the ABI, abi/include/dynop/dynop_wasm.h. C plugins keep
// their source and link abi/wasm/dynop_wasm.c; Go plugins import
// [github.com/dynop/dynop/loader/wasm/guest]. docs/WASM.md has the whole
// story.
//
// # The sandbox
//
// A module gets no file system, no network, a fixed clock, a fixed random
// seed and no environment, unless it asks for a capability in its info
// and the host grants it ([Config.Grant]): "clock", "random",
// "env", "stdio". A module that asks for one not granted is unsupported.
// Each instance's memory is bounded ([Config.MemoryLimit]) and
// each call has a deadline ([Config.CallTimeout], and the caller's
// context). A trap, running out of memory, a deadline, a pointer outside
// the module's memory or a write past an output buffer fails the call
// with an error naming the plugin and the operator, wrapping [ErrTrap],
// [ErrMemoryLimit], context.DeadlineExceeded or [ErrABI]; the module
// instance is discarded and the next call gets a new one. The host keeps
// running.
//
// # Instances
//
// Module instances are not safe for concurrent calls, so a started
// plugin keeps a pool of them: each ran the module's register, and each
// operator instance holds one from its creation to its Close. The
// parallel executor runs a WebAssembly operator on as many workers as it
// has instances of it. Interfaces live in the plugin's first instance;
// calls to them take turns.
//
// # Tensors
//
// The module exports an allocator (dynop_wasm_alloc). An operator
// instance keeps one arena in its module instance, grown as needed: the
// host writes each input's bytes into it in place (for setup and again
// for run), lays out the dynop_tensor structs, zeroes each output, calls
// setup or run once per batch, checks the guard bytes after every output,
// and copies each output out (docs/WASM.md measures what that costs).
//
// # Start-up
//
// Compiled modules are cached on disk, under [dynop.Options.CacheDir]/wasm
// (default $XDG_CACHE_HOME/dynop/wasm), so the second start skips
// compilation: [Plugin.CompileTime] says how long the last start took to
// compile or load it.
//
// A cached module is native code, so the cache is authenticated: each
// entry carries an HMAC-SHA256, keyed with a secret kept outside the
// cache directory ($XDG_CONFIG_HOME/dynop/wasm-cache.key, mode 0600, made
// on first use), over the SHA-256 of the module compiled and the code.
// An entry that does not verify is logged, removed and compiled again, so
// whoever can write the cache directory cannot swap one module's code for
// another's. wazero reads compiled code only from a private directory
// that dynop fills, per compile, with an entry that verified; wazero's own
// directories from earlier versions are removed unread. Without a usable
// key file (logged once) a process caches for itself only, in memory.
// docs/WASM.md has the details.
package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/abi"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/abisession"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// Errors of WebAssembly plugins; test for them with [errors.Is].
var (
	// ErrABI: the module breaks dynop_wasm.h: a missing or mistyped
	// export, an import the host does not provide, a pointer outside its
	// memory, a write past an output buffer, malformed info. It is the
	// same error as native.ErrABI.
	ErrABI = errdefs.ErrABI
	// ErrTrap: the module trapped (unreachable, out-of-bounds access,
	// division by zero, stack overflow) or exited.
	ErrTrap = errors.New("module trapped")
	// ErrMemoryLimit: the module ran out of memory under the host's limit.
	ErrMemoryLimit = errors.New("module reached its memory limit")
	// ErrCapability: the module asks for a capability the host does not
	// grant. It comes with [dynop.ErrUnsupported].
	ErrCapability = errors.New("capability not granted")
)

func init() {
	dynop.RegisterLoader(dynop.Loader{
		Name:      loaderName,
		Magic:     "\x00asm",
		Inspect:   inspect,
		Plugin:    newPlugin,
		Sandboxed: true,
		Errors:    map[string]error{"abi": ErrABI, "trap": ErrTrap, "memory": ErrMemoryLimit},
	})
}

// loaderData is what a WebAssembly plugin's manifest keeps besides its
// info.
type loaderData struct {
	Capabilities []string `json:"capabilities,omitempty"`
}

// inspect reads the plugin in the file at path in the sandbox, in this
// process, with the settings of the host opened with opts (nil in a
// scanner child: the defaults).
func inspect(ctx context.Context, path string, opts *dynop.Options) (schema.Plugin, json.RawMessage, error) {
	code, err := readModule(path)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	cfg, err := configOf(opts)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	info, caps, _, err := readInfo(ctx, path, code, sha256.Sum256(code), cfg)
	if err != nil {
		return schema.Plugin{}, nil, err
	}
	var data json.RawMessage
	if len(caps) > 0 {
		data, _ = json.Marshal(loaderData{caps})
	}
	return info, data, nil
}

// readInfo compiles code, whose SHA-256 is sum, and asks an instance of
// it for its info; it says how long compiling took.
func readInfo(ctx context.Context, path string, code []byte, sum sign.Digest, cfg config) (schema.Plugin, []string, time.Duration, error) {
	e, err := newEngine(ctx, path, code, sum, cfg, nil)
	if err != nil {
		return schema.Plugin{}, nil, 0, err
	}
	defer e.close(ctx)
	in, err := e.newInstance(ctx)
	if err != nil {
		return schema.Plugin{}, nil, 0, err
	}
	info, caps, err := in.info(ctx)
	return info, caps, e.compileTime, err
}

// info calls dynop_wasm_info and decodes what it returns (see
// decodeInfo).
func (in *instance) info(ctx context.Context) (schema.Plugin, []string, error) {
	name := in.e.name
	if err := in.call(ctx, exInfo); err != nil {
		return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w", name, err)
	}
	r := in.stack[0]
	if uint32(r) == 0 {
		return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w: %s returned no info (the plugin has no get_info, or its get_info returned NULL: see its log)", name, ErrABI, exports[exInfo].name)
	}
	return decodeInfo(name, linear{in.mem}, uint64(uint32(r)), uint64(r>>32))
}

// readModule reads the module file at path, refusing without blocking a
// file that is not a regular file (a named pipe would block the read).
func readModule(path string) ([]byte, error) {
	code, err := regfile.ReadFile(path)
	if regfile.Is(err) {
		return nil, fmt.Errorf("wasm: %s: %w: %w", path, dynop.ErrFormat, err)
	}
	return code, err
}

// decodeInfo reads what dynop_wasm_info returned in the memory m of
// module name: the dynop_plugin_info at info, read and checked as a
// native plugin's is (package abihost), and the list of capabilities the
// module asks for at caps (0: none). On top of the ABI's rules, a module's
// operators run on the cpu and it declares no graph passes. Errors name
// the module and wrap ErrABI, schema.ErrPlugin or dynop.ErrUnsupported.
func decodeInfo(name string, m abihost.Memory, info, caps uint64) (schema.Plugin, []string, error) {
	pi, _, err := abihost.DecodeInfo(m, info)
	if err != nil {
		return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w", name, err)
	}
	if len(pi.Passes) > 0 {
		return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w: plugin %q declares graph passes, which WebAssembly plugins cannot provide yet", name, errdefs.ErrUnsupported, pi.ID)
	}
	for _, s := range pi.Operators {
		if !slices.Equal(s.Devices, []schema.Device{"cpu"}) {
			return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w: operator %q lists devices %v; a WebAssembly operator runs on the cpu only", name, schema.ErrPlugin, s.Name, s.Devices)
		}
	}
	var asked []string
	if caps != 0 {
		list, ok := m.CString(caps, abihost.MaxString)
		if !ok {
			return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w: the capabilities at %#x are not a NUL-terminated string in the module's memory", name, ErrABI, caps)
		}
		for c := range strings.SplitSeq(list, ",") {
			if c = strings.TrimSpace(c); c != "" && !slices.Contains(asked, c) {
				asked = append(asked, c)
			}
		}
	}
	for _, c := range asked {
		if !slices.Contains(capabilities, c) {
			return schema.Plugin{}, nil, fmt.Errorf("wasm: %s: %w: plugin %q asks for capability %q, which no host grants (known: %s)", name, ErrABI, pi.ID, c, strings.Join(capabilities, ", "))
		}
	}
	return pi, asked, nil
}

// newPlugin makes the plugin enumerated as f, without loading it.
func newPlugin(f *discover.File, opts *dynop.Options) (plugin.Plugin, error) {
	var d loaderData
	if err := abisession.LoaderData("wasm", f, &d); err != nil {
		return nil, err
	}
	cfg, err := configOf(opts)
	if err != nil {
		return nil, err
	}
	p := &Plugin{path: f.Path, info: f.Info, caps: d.Capabilities, file: f, cfg: cfg}
	return p, p.checkGrants()
}

// checkGrants reports the capabilities the plugin asks for that the host
// does not grant.
func (p *Plugin) checkGrants() error {
	var missing []string
	for _, c := range p.caps {
		if !p.cfg.grant[c] {
			missing = append(missing, c)
		}
	}
	if missing == nil {
		return nil
	}
	return fmt.Errorf("wasm: %s: %w: %w: plugin %q asks for %s, which this host does not grant (wasm.Config.Grant; $DYNOP_SANDBOX_GRANT for the dynop command)", p.path, dynop.ErrUnsupported, ErrCapability, p.info.ID, strings.Join(missing, ", "))
}

// Plugin is a WebAssembly plugin: a [plugin.Plugin] whose Start
// compiles the module and instantiates it in the sandbox, and whose
// Unload closes every instance.
type Plugin struct {
	path string
	info schema.Plugin
	caps []string
	file *discover.File // what was enumerated; nil after Load
	sum  sign.Digest    // the digest Load read, when file is nil
	cfg  config

	mu          sync.Mutex
	sess        *session // while started
	compileTime time.Duration
}

var (
	_ plugin.Plugin   = (*Plugin)(nil)
	_ plugin.Stopper  = (*Plugin)(nil)
	_ plugin.Unloader = (*Plugin)(nil)
)

// Load reads the WebAssembly plugin in the file at path without starting
// it, in this process (the sandbox makes that safe), for a host opened
// with opts: its CacheDir, NoCache, Logger and [Config] in Loaders apply. The plugin
// loads the file again when it starts, and only if it still has the same
// digest. Hand it to a host in [dynop.Options.Plugins]. Errors wrap
// [dynop.ErrFormat] (not a module), [ErrABI], [ErrTrap], or, with the
// plugin returned too, [dynop.ErrUnsupported] (it asks for a capability
// opts do not grant).
func Load(ctx context.Context, path string, opts dynop.Options) (*Plugin, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	code, err := readModule(abs)
	if err != nil {
		return nil, err
	}
	cfg, err := configOf(&opts)
	if err != nil {
		return nil, err
	}
	p := &Plugin{path: abs, sum: sha256.Sum256(code), cfg: cfg}
	if p.info, p.caps, p.compileTime, err = readInfo(ctx, abs, code, p.sum, cfg); err != nil {
		return nil, err
	}
	return p, p.checkGrants()
}

// Info implements [plugin.Plugin].
func (p *Plugin) Info() schema.Plugin { return p.info }

// Path returns the module's file.
func (p *Plugin) Path() string { return p.path }

// Engine names the WebAssembly engine that runs the plugin: "wasmtime"
// or "wazero" (see [Engines] and [Config.Engine]).
func (p *Plugin) Engine() string { return p.cfg.backend.name() }

// Capabilities returns what the module asks the host to grant.
func (p *Plugin) Capabilities() []string { return slices.Clone(p.caps) }

// CompileTime returns how long the plugin's last start (or [Load]) took to
// compile its module, or to load it from the compilation cache.
func (p *Plugin) CompileTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.compileTime
}

// Start implements [plugin.Plugin]: it reads the module (checking its
// digest), compiles it, makes the first instance, checks the module's
// info is still what was enumerated, and calls its register.
func (p *Plugin) Start(ctx context.Context, h plugin.Registrar) (err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sess != nil {
		return fmt.Errorf("wasm: plugin %q: Start: %w: it is started already", p.info.ID, dynop.ErrState)
	}
	if err := p.checkGrants(); err != nil {
		return err
	}
	code, err := readModule(p.path)
	if err != nil {
		return fmt.Errorf("wasm: plugin %q: %w", p.info.ID, err)
	}
	sum := sign.Digest(sha256.Sum256(code))
	if p.file != nil {
		if err := p.file.CheckLoaded(sum); err != nil {
			return err
		}
	} else if sum != p.sum {
		return fmt.Errorf("wasm: plugin %q: %s: %w", p.info.ID, p.path, discover.ErrChanged)
	}
	e, err := newEngine(ctx, p.info.ID, code, sum, p.cfg, p.caps)
	if err != nil {
		return err
	}
	p.compileTime = e.compileTime
	s := &session{p: p, h: h, e: e}
	e.sess = s
	defer func() {
		if err != nil {
			err = errors.Join(err, e.close(ctx))
		}
	}()
	if s.main, err = e.newInstance(ctx); err != nil {
		return err
	}
	info, _, err := s.main.info(ctx)
	if err != nil {
		return err
	}
	if d := p.info.Diff(info); d != "" {
		return fmt.Errorf("wasm: %s: %w: the plugin's info changed since it was enumerated: %s", p.path, dynop.ErrInvalid, d)
	}
	reg, err := s.register(ctx, s.main, false)
	if err != nil {
		return err
	}
	if err := s.publish(reg); err != nil {
		return errors.Join(err, s.deregister(ctx))
	}
	p.sess = s
	return nil
}

// Stop implements [plugin.Stopper]: it waits for the calls in
// flight, makes later ones fail, and calls the module's deregister in the
// plugin's first instance.
func (p *Plugin) Stop(ctx context.Context) error {
	p.mu.Lock()
	s := p.sess
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.deregister(ctx)
}

// Unload implements [plugin.Unloader]: it closes every instance of the
// module.
func (p *Plugin) Unload(ctx context.Context) error {
	p.mu.Lock()
	s := p.sess
	p.sess = nil
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	s.stop()
	return s.e.close(ctx)
}

// session is a started plugin.
type session struct {
	p *Plugin
	h plugin.Registrar
	e *engine

	mainMu sync.Mutex      // the first instance runs one call at a time
	main   *instance       // the first instance: register ran here, interfaces live here
	ops    []*wasmOp       // what register registered, in order
	tables []*Table        // the interfaces added
	refs   abisession.Refs // what the module acquired
	gate   abisession.Gate // calls into the module (operators, interfaces)
	// deregistering: the module's deregister runs, and releases only
	// forget (abisession.Refs.Release).
	deregistering atomic.Bool
	pool          pool
}

// register runs the module's register in instance in.
func (s *session) register(ctx context.Context, in *instance, replica bool) (*register, error) {
	reg := &register{ctx: ctx, replica: replica}
	in.reg = reg
	defer func() { in.reg = nil }()
	if err := in.call(ctx, exRegister); err != nil {
		return nil, fmt.Errorf("wasm: plugin %q: %w", s.p.info.ID, err)
	}
	if rc := in.result(); rc != 0 {
		return nil, s.resultError(in, "register", rc, -1)
	}
	if replica && (len(reg.ops) != len(s.ops) || len(reg.ifaces) != len(s.tables)) {
		return nil, fmt.Errorf("wasm: plugin %q: register: %w: this instance registered %d operator(s) and %d interface(s), the plugin's first %d and %d", s.p.info.ID, ErrABI, len(reg.ops), len(reg.ifaces), len(s.ops), len(s.tables))
	}
	return reg, nil
}

// resultError describes a module function that returned rc.
func (s *session) resultError(in *instance, call string, rc int32, sample int) error {
	return in.atLimit(abisession.CallError("wasm", s.p.info.ID, call, abi.Result(rc), in.message, sample, in.lastErr))
}

// publish registers the operators register registered with the host.
func (s *session) publish(reg *register) error {
	for _, r := range reg.ops {
		schema, _ := s.p.info.Operator(r.name)
		o := &wasmOp{s: s, registered: r, schema: schema}
		s.ops = append(s.ops, o)
	}
	for _, sch := range s.p.info.Operators {
		k := slices.IndexFunc(s.ops, func(o *wasmOp) bool { return o.name == sch.Name })
		if k < 0 {
			return fmt.Errorf("wasm: plugin %q: %w: register did not register operator %q, which its info declares", s.p.info.ID, dynop.ErrInvalid, sch.Name)
		}
		o := s.ops[k]
		desc := op.Operator{Schema: sch, Backends: map[schema.Device]op.Factory{"cpu": o.create}}
		if o.variant != "" {
			desc.Variants = map[schema.Device][]op.Variant{"cpu": {{Name: o.variant, Factory: o.create}}}
		}
		if err := s.h.RegisterOperator(desc); err != nil {
			return err
		}
	}
	return nil
}

// deregister stops calls and runs the module's deregister.
func (s *session) deregister(ctx context.Context) error {
	s.stop()
	s.mainMu.Lock()
	defer s.mainMu.Unlock()
	if s.main.dead != nil {
		return nil
	}
	s.deregistering.Store(true)
	defer s.deregistering.Store(false)
	if err := s.main.call(ctx, exDeregister); err != nil {
		return fmt.Errorf("wasm: plugin %q: %w", s.p.info.ID, err)
	}
	if rc := s.main.result(); rc != 0 {
		return s.resultError(s.main, "deregister", rc, -1)
	}
	return nil
}

// stop waits for the calls in flight and makes later ones fail.
func (s *session) stop() { s.gate.Stop() }

// enter begins a call into the plugin, failing if it stopped; leave ends
// it. Calls may nest (abisession.Gate).
func (s *session) enter() error {
	if !s.gate.Enter() {
		return fmt.Errorf("wasm: plugin %q: %w: the plugin stopped", s.p.info.ID, dynop.ErrState)
	}
	return nil
}

func (s *session) leave() { s.gate.Leave() }
