// Package dynop is a host for runtime-loaded compute plugins.
//
// A [Host] knows a set of plugins by their [schema.Plugin] and starts none of
// them when it opens. Asking for an interface of a plugin ([Host.Acquire],
// or the typed [Acquire]) or for an operator it provides by name
// ([Host.NewOperator]) starts that plugin, and the plugins it acquires
// from its Start, first. Every acquisition returns a [Ref]; when the last
// reference to a plugin's interfaces is released, the host stops the
// plugin, and then whatever it alone kept alive. [Host.Close] stops what is
// left, dependents before what they depend on, and reports references the
// program never released.
//
// The model follows NVIDIA's NVIGI plugin manager (typed, versioned
// interfaces; start on first request; reference counting) with three
// differences: every method is safe for concurrent use, the requested
// minimum interface version is honoured ([iface.Compatible]), and
// dependency cycles are reported with the cycle spelled out ([ErrCycle])
// instead of deadlocking. From Omniverse's Execution Framework it takes
// clear-callbacks ([Host.OnUnload]): before a plugin stops, those who point
// into it without a reference are told to let go.
//
// Plugin files (native libraries; WebAssembly modules when a loader for
// them is imported) are found on a search path and read by the loader
// registered for their format ([RegisterLoader]) without running their
// code in the host: their info comes from a manifest, the registry cache
// or a scanner child process: the program run again, whose main calls
// [ServeScanner] first (see package discover). [Host.Plugins] lists every
// plugin found with its state, including those that cannot be used
// (broken, unsupported on this machine, untrusted under the signature
// policy, or a duplicate of an earlier one) and why.
//
// The host never calls into a plugin while holding its lock, so a plugin may
// acquire other plugins from its Start. A panic in a plugin's lifecycle
// methods becomes an error wrapping [ErrPanic]; the host carries on.
package dynop

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynop/dynop/discover"
	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/suggest"
	"github.com/dynop/dynop/machine"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// Sentinel errors; test for them with [errors.Is]. Messages name the
// plugin, the interface and what was expected.
var (
	// ErrNotFound: no such plugin, interface, operator or pass.
	ErrNotFound = errdefs.ErrNotFound
	// ErrVersion: the provided version does not satisfy the requested one.
	ErrVersion = iface.ErrVersion
	// ErrType: the implementation is not of the Go type the caller expects.
	ErrType = iface.ErrType
	// ErrInvalid: plugin information breaks the rules of [schema.Plugin].
	ErrInvalid = schema.ErrPlugin
	// ErrCycle: plugins acquire each other while starting.
	ErrCycle = errdefs.ErrCycle
	// ErrDuplicate: a plugin ID, or an interface of a plugin, given twice.
	ErrDuplicate = errdefs.ErrDuplicate
	// ErrClosed: the host (or a graph, or an operator instance) is closed.
	ErrClosed = errdefs.ErrClosed
	// ErrReleased: the reference was already released.
	ErrReleased = errdefs.ErrReleased
	// ErrPanic: Go code panicked — a plugin's lifecycle step, an
	// operator, a graph node; the panic was recovered.
	ErrPanic = errdefs.ErrPanic
	// ErrUnsupported: an operator has no backend for the device asked
	// for, no variant of it runs on this CPU, or a plugin needs what this
	// machine or host does not offer.
	ErrUnsupported = errdefs.ErrUnsupported
	// ErrState: the call is not allowed in the plugin's current state.
	ErrState = errdefs.ErrState
	// ErrSignature: a plugin file's signature does not verify; see
	// package sign.
	ErrSignature = sign.ErrSignature
	// ErrLeaked: Close found references the program never released.
	ErrLeaked = errors.New("interfaces still referenced at close (leaked)")
)

// Ref is a counted reference to an acquired interface; see [plugin.Ref].
type Ref = plugin.Ref

// Options configures a Host.
type Options struct {
	// Plugins are Go plugins this host knows in addition to those
	// registered with plugin.Register.
	Plugins []plugin.Plugin
	// NoRegistered leaves out the plugins registered with plugin.Register,
	// so the host knows only Plugins and the plugin files it finds.
	NoRegistered bool

	// Paths are plugin files (native shared libraries, WebAssembly
	// modules) and directories of them, searched before
	// $DYNOP_PLUGIN_PATH, the directory plugins next to the executable,
	// PREFIX/lib/dynop/plugins for an executable installed as
	// PREFIX/bin/NAME, and $XDG_DATA_HOME/dynop/plugins (see
	// [discover.SearchPath]). Each
	// file is read by the loader registered for its format with
	// [RegisterLoader], from its manifest, the registry cache or a scanner
	// child process: no plugin code runs in the host until the plugin
	// starts. A file that cannot be used does not fail Open: it is logged
	// and listed by [Host.Plugins] with its state and the reason.
	Paths []string
	// NoDefaultPaths searches Paths only.
	NoDefaultPaths bool
	// CacheDir holds the registry cache; "" means $XDG_CACHE_HOME/dynop.
	CacheDir string
	// NoCache neither reads nor writes the registry cache.
	NoCache bool
	// Scanner is the program run to read the info of a plugin file that
	// has no manifest; "" runs this program again. Its main must call
	// [ServeScanner] first (cli.Main does) and import the loaders; a file
	// whose scanner does not serve is listed as broken, with a reason that
	// says so. ScanTimeout bounds one scan (0: 10 s).
	Scanner     string
	ScanTimeout time.Duration

	// TrustDir is a directory of trusted public keys (*.pub, see package
	// sign); TrustedKeys are more. Either makes a trust store.
	TrustDir    string
	TrustedKeys []ed25519.PublicKey
	// SignaturePolicy says what to do with plugin files whose signature
	// does not verify: off, warn (log and load) or require (list them as
	// untrusted and never load them). The default is require when there
	// is a trust store, off otherwise.
	SignaturePolicy sign.Policy

	// Machine is the machine whose features plugins' requirements are
	// checked against; nil means [machine.Current]. CPU variants are
	// chosen among the features both it and this CPU have.
	Machine *machine.Machine

	// CPUFeatures turns CPU features off for this host, in the form of
	// $DYNOP_CPU_FEATURES ("-avx512f,-avx2"; see package dispatch), which
	// applies too. A plugin whose requirements need a feature that is off
	// is unsupported, and operators choose among their variants without
	// it, as on a CPU that lacks it.
	CPUFeatures string
	// VerifyVariants checks every variant of an operator that this CPU
	// can run against the operator's reference variant at its first run,
	// and disables those that disagree (see [op.Options.VerifyVariants]).
	// DYNOP_VERIFY_VARIANTS=1 turns it on too.
	VerifyVariants bool

	// Sandbox chooses between a plugin's native and sandboxed
	// (WebAssembly) builds.
	Sandbox SandboxPolicy
	// Loaders holds loaders' own settings for this host, at most one per
	// loader, such as a [github.com/dynop/dynop/loader/wasm.Config] with
	// the sandbox's memory limit, call deadline and granted
	// capabilities. A loader without one here uses its defaults.
	Loaders []LoaderConfig

	// Logger receives the host's log: lifecycle at debug level, problems at
	// warn and error. Nil means slog.Default().
	Logger *slog.Logger
}

// Host owns a set of plugins and the references to their interfaces. All
// its methods are safe for concurrent use.
type Host struct {
	log *slog.Logger

	mu       sync.Mutex
	idle     *sync.Cond // signalled when a clear-callback returns
	closed   bool
	plugins  map[string]*record
	sorted   []*record // by ID
	appRefs  slotList  // references the host program holds
	slots    []*slot   // every slot, by index
	free     *slot
	refusals int            // started plugins with no references that refused to unload
	others   []PluginStatus // files that are broken without an ID, and duplicates
	watchers []*watcher
	startSeq uint64
	ops      *op.Registry
	passes   *graph.Passes
	machine  *machine.Machine // with the CPU features turned off removed
	cpu      dispatch.CPU
}

// hostMachine returns the machine of opts (or this one) with the CPU
// features that $DYNOP_CPU_FEATURES and opts.CPUFeatures turn off moved
// from CPUFeatures to CPUFeaturesOff, and the CPU variants may use: what
// both the machine and this CPU have (a Machine describing a richer CPU
// must not make code run that the CPU cannot run), less what is off.
func hostMachine(opts Options) (*machine.Machine, dispatch.CPU, error) {
	m := opts.Machine
	if m == nil {
		m = machine.Current()
	}
	cpu := dispatch.CPU{Has: dispatch.Detect() & dispatch.FromNames(m.CPUFeatures)}
	cpu, err := cpu.TurnOff(os.Getenv(dispatch.EnvFeatures))
	if err != nil {
		return nil, cpu, fmt.Errorf("dynop: open: %s: %w", dispatch.EnvFeatures, err)
	}
	if cpu, err = cpu.TurnOff(opts.CPUFeatures); err != nil {
		return nil, cpu, fmt.Errorf("dynop: open: Options.CPUFeatures: %w", err)
	}
	if cpu.Off == 0 {
		return m, cpu, nil
	}
	c := *m
	c.CPUFeatures, c.CPUFeaturesOff = nil, nil
	for _, name := range m.CPUFeatures {
		if cpu.TurnsOff(name) {
			c.CPUFeaturesOff = append(c.CPUFeaturesOff, name)
		} else {
			c.CPUFeatures = append(c.CPUFeatures, name)
		}
	}
	return &c, cpu, nil
}

// CPU returns the CPU features this host lets plugins use: those the CPU
// has, less those turned off by $DYNOP_CPU_FEATURES and
// [Options.CPUFeatures].
func (h *Host) CPU() dispatch.CPU { return h.cpu }

// record is the host's state for one plugin. Fields other than id, p,
// info, unusable and log are guarded by Host.mu.
type record struct {
	id      string
	path    string   // the file it was loaded from, if any
	signer  string   // the key id whose signature verified
	bundled []string // PluginStatus.Bundled
	// sandboxed: a plugin file whose loader runs it in a sandbox (wasm).
	sandboxed bool
	// unverified: the file's signature did not verify, and the signature
	// policy let it load anyway (warn).
	unverified bool
	p          plugin.Plugin
	info       schema.Plugin
	unusable   error
	log        *slog.Logger // the host's logger with the plugin's ID

	state       State
	done        chan struct{} // closed when the running transition ends
	registering bool          // its Start is running: interfaces may be added
	attempt     uint64        // start attempts so far
	lastErr     error         // why the last start failed
	waitingOn   []*record     // while starting: the plugins whose transitions its start awaits
	live        []*entry      // interfaces added by Start
	ops         operatorTable // operators registered by Start
	passes      passTable     // passes registered by Start
	refs        int           // references held to live
	refused     bool          // started, no references, CanUnload said false
	held        slotList      // references this plugin holds to others
	handle      *handle       // the Host the plugin sees in this start
	seq         uint64        // order in which it finished starting
	starts      int
	stops       int
}

// Open returns a host that knows the registered Go plugins, opts.Plugins
// and the plugin files on the search path (see [Options.Paths]). It starts
// no plugin and runs no plugin code.
//
// Every plugin it finds is listed by [Host.Plugins], usable or not. A
// plugin whose Info is invalid, whose file cannot be read, or that claims
// an interface UID another plugin gives a different name is
// [StateBroken]; one whose requirements this machine does not meet is
// [StateUnsupported]; one whose signature the policy requires but does not
// verify is [StateUntrusted]. The reason is logged and returned by any
// attempt to use it. When two plugins have one ID, the first usable one in
// search order (compiled-in Go plugins first) wins and the others are
// [StateDuplicate].
//
// Open fails on a nil plugin in opts.Plugins, a plugin ID that two Go
// plugins share, a trust store that cannot be read, or a cancelled ctx.
func Open(ctx context.Context, opts Options) (*Host, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opts.validateLoaders(); err != nil {
		return nil, fmt.Errorf("dynop: open: %w", err)
	}
	h := &Host{log: opts.Logger, plugins: make(map[string]*record)}
	if h.log == nil {
		h.log = slog.Default()
	}
	var err error
	if h.machine, h.cpu, err = hostMachine(opts); err != nil {
		return nil, err
	}
	verify, err := dispatch.VerifyFromEnv()
	if err != nil {
		return nil, fmt.Errorf("dynop: open: %w", err)
	}
	h.ops = op.NewRegistry(op.Options{Logger: h.log, CPU: &h.cpu, VerifyVariants: verify || opts.VerifyVariants, NotFound: searched(opts)})
	h.idle = sync.NewCond(&h.mu)
	for i, p := range opts.Plugins {
		if p == nil {
			return nil, fmt.Errorf("dynop: open: Options.Plugins[%d] is nil", i)
		}
	}
	var list []plugin.Plugin
	if !opts.NoRegistered {
		list = plugin.Registered()
	}
	var found []*record // in search order
	for _, p := range append(list, opts.Plugins...) {
		rec := h.newRecord(p)
		if slices.ContainsFunc(found, func(o *record) bool { return o.id == rec.id }) {
			return nil, fmt.Errorf("dynop: open: %w plugin id %q: two plugins have it", ErrDuplicate, rec.id)
		}
		found = append(found, rec)
	}
	files, err := h.enumerate(ctx, opts)
	if err != nil {
		return nil, err
	}
	found = append(found, files...)
	for _, rec := range found {
		if rec.state == StateAvailable {
			if err := h.machine.Check(rec.info.Requirements); err != nil {
				h.setState(rec, StateUnsupported, err)
			}
		}
	}
	h.resolveDuplicates(found)
	slices.SortFunc(h.sorted, func(a, b *record) int { return strings.Compare(a.id, b.id) })
	h.checkUIDs()
	h.declareOperators()
	h.declarePasses()
	for _, rec := range h.sorted {
		for _, n := range rec.info.Needs {
			if _, ok := h.plugins[n.Plugin]; !ok && rec.unusable == nil {
				h.log.Warn("plugin needs a plugin this host does not know", "plugin", rec.id, "needs", n.Plugin, "interface", n.Interface.Name)
			}
		}
	}
	return h, nil
}

// searched says where a host of opts looks for plugin files, for the
// error of an operator that no plugin found provides (op.Options.NotFound).
func searched(opts Options) string {
	return searchedIn(discover.SearchPath(opts.Paths, !opts.NoDefaultPaths))
}

// searchedIn is searched of the search path entries.
func searchedIn(entries []discover.Entry) string {
	if len(entries) == 0 {
		return "the host looked for no plugin files (no Paths given, and NoDefaultPaths)"
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		from := "given"
		switch e.Source {
		case discover.SourceEnv:
			from = "$" + discover.EnvPath
		case discover.SourceExeDir:
			from = "next to the program"
		case discover.SourcePrefixDir:
			from = "installed with the program"
		case discover.SourceUserDir:
			from = "the user's plugin directory"
		}
		parts[i] = fmt.Sprintf("%s (%s)", e.Path, from)
	}
	return fmt.Sprintf("the host looked for plugins in %s; %s adds files and directories", strings.Join(parts, ", "), discover.EnvPath)
}

// enumerate finds the plugin files of opts and makes a record of each
// file that has a plugin ID; the others go to h.others as broken.
func (h *Host) enumerate(ctx context.Context, opts Options) ([]*record, error) {
	trust, err := trustStore(opts)
	if err != nil {
		return nil, err
	}
	loaders := registeredLoaders()
	res, err := discover.Enumerate(ctx, discover.Options{
		Paths: opts.Paths, NoDefaultPaths: opts.NoDefaultPaths, Formats: formats(loaders, &opts),
		CacheDir: opts.CacheDir, NoCache: opts.NoCache, Scanner: opts.Scanner, ScanTimeout: opts.ScanTimeout,
		Trust: trust, Policy: opts.SignaturePolicy, Logger: h.log,
	})
	if err != nil {
		return nil, fmt.Errorf("dynop: open: %w", err)
	}
	var out []*record
	for _, f := range res.Files {
		if f.Err == nil && f.Info.ID == "" && f.Untrusted != nil { // not scanned under policy require
			h.log.Warn("plugin file untrusted", "path", f.Path, "err", f.Untrusted)
			h.others = append(h.others, PluginStatus{Path: f.Path, State: StateUntrusted, Err: f.Untrusted})
			continue
		}
		var (
			p         plugin.Plugin
			openErr   error
			sandboxed bool
		)
		if f.Err == nil {
			l := loaders[slices.IndexFunc(loaders, func(l Loader) bool { return l.Name == f.Format })]
			sandboxed = l.Sandboxed
			if p, openErr = l.Plugin(f, &opts); openErr != nil && (p == nil || !errors.Is(openErr, ErrUnsupported)) {
				f.Err = openErr
			}
		}
		if f.Err != nil {
			state := StateBroken
			if errors.Is(f.Err, ErrUnsupported) && !errors.Is(f.Err, ErrInvalid) {
				state = StateUnsupported // a library it needs is missing, say
			}
			h.log.Warn("plugin file "+state.String(), "path", f.Path, "err", f.Err)
			h.others = append(h.others, PluginStatus{Path: f.Path, State: state, Err: f.Err})
			continue
		}
		rec := h.newRecord(p)
		rec.path, rec.signer, rec.sandboxed = f.Path, f.Signer, sandboxed
		for _, b := range f.Bundled {
			rec.bundled = append(rec.bundled, f.BundledPath(b))
		}
		if openErr != nil { // the loader says it cannot run on this host
			h.setState(rec, StateUnsupported, openErr)
		}
		h.applySandboxPolicy(rec, opts.Sandbox)
		if f.Untrusted != nil {
			rec.unverified = true
			if res.Policy == sign.PolicyRequire {
				h.setState(rec, StateUntrusted, f.Untrusted)
			} else {
				h.log.Warn("plugin signature does not verify; loading it anyway (signature policy warn)", "plugin", rec.id, "path", f.Path, "err", f.Untrusted)
			}
		}
		out = append(out, rec)
	}
	return out, nil
}

// trustStore makes the trust store of opts, or nil if it has none.
func trustStore(opts Options) (*sign.TrustStore, error) {
	var ts *sign.TrustStore
	if opts.TrustDir != "" {
		var err error
		if ts, err = sign.LoadTrustStore(opts.TrustDir); err != nil {
			return nil, fmt.Errorf("dynop: open: trust store: %w", err)
		}
	}
	if len(opts.TrustedKeys) > 0 {
		if ts == nil {
			ts = sign.NewTrustStore()
		}
		ts.Add(opts.TrustedKeys...)
	}
	return ts, nil
}

// resolveDuplicates makes the host know one plugin per ID: the best
// usable one in found by buildRank, the first on the search path among
// equals, or the first if none is usable. The others are
// listed as duplicates of it, or, if they cannot be used anyway, in their
// own state with the winner named. Only Open calls it.
func (h *Host) resolveDuplicates(found []*record) {
	byID := make(map[string][]*record)
	var ids []string
	for _, rec := range found {
		if byID[rec.id] == nil {
			ids = append(ids, rec.id)
		}
		byID[rec.id] = append(byID[rec.id], rec)
	}
	for _, id := range ids {
		recs := byID[id]
		win := recs[0]
		for _, r := range recs {
			if r.state.Usable() && (!win.state.Usable() || buildRank(r) < buildRank(win)) {
				win = r
			}
		}
		h.plugins[id] = win
		h.sorted = append(h.sorted, win)
		winner := win.path
		if winner == "" {
			winner = "compiled in"
		}
		for _, rec := range recs {
			if rec == win {
				continue
			}
			st := rec.status()
			st.DuplicateOf = winner
			if rec.state.Usable() {
				why := "it comes first on the search path"
				if buildRank(rec) != buildRank(win) {
					why = buildChoice(win, rec)
				}
				st.State = StateDuplicate
				st.Err = fmt.Errorf("dynop: plugin file %s: %w plugin id %q: %s has it and is used: %s", rec.path, ErrDuplicate, id, winner, why)
				h.log.Warn("plugin duplicate; using another", "plugin", id, "path", rec.path, "using", winner, "why", why)
			} else {
				st.Err = fmt.Errorf("%w (%s, which has its plugin id %q, is used instead)", st.Err, winner, id)
			}
			h.others = append(h.others, st)
		}
	}
}

// newRecord reads p's Info into a new record.
func (h *Host) newRecord(p plugin.Plugin) *record {
	rec := &record{p: p, path: pathOf(p)}
	var err error
	rec.info, err = readInfo(p)
	rec.id = rec.info.ID
	rec.log = h.log.With("plugin", rec.id)
	if err != nil {
		state := StateBroken
		if errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrInvalid) {
			state = StateUnsupported
		}
		h.setState(rec, state, err)
	}
	return rec
}

// setState puts rec into one of the states in which it is never started,
// adding err to the reasons. Only Open calls it.
func (h *Host) setState(rec *record, state State, err error) {
	rec.unusable = errors.Join(rec.unusable, err)
	if rec.state.Usable() || state == StateBroken {
		rec.state = state
	}
	h.log.Warn("plugin "+state.String(), "plugin", rec.id, "path", rec.path, "err", err)
}

// checkUIDs makes unusable every plugin that gives an interface UID a name
// other plugins do not: a UID names one interface, and two meanings for
// one UID mean a copied UID that would hand callers the wrong struct. All
// claimants are affected, since none can be known to be the right one.
// Only Open calls it, after sorting.
func (h *Host) checkUIDs() {
	type claim struct {
		rec  *record
		name string
	}
	claims := make(map[iface.UID][]claim)
	var uids []iface.UID
	for _, rec := range h.sorted {
		if rec.unusable != nil {
			continue
		}
		for _, d := range rec.info.Interfaces {
			if claims[d.UID] == nil {
				uids = append(uids, d.UID)
			}
			claims[d.UID] = append(claims[d.UID], claim{rec, d.Name})
		}
	}
	for _, uid := range uids {
		cs := claims[uid]
		if !slices.ContainsFunc(cs, func(c claim) bool { return c.name != cs[0].name }) {
			continue
		}
		parts := make([]string, len(cs))
		for i, c := range cs {
			parts[i] = fmt.Sprintf("%q by %s", c.name, c.rec.id)
		}
		err := fmt.Errorf("dynop: %w interface UID {%s}: claimed as %s; a UID must name one interface", ErrDuplicate, uid, strings.Join(parts, ", "))
		for _, c := range cs {
			h.setState(c.rec, StateBroken, err)
		}
	}
}

// readInfo calls p.Info, validates it and checks its API version. If Info
// panics, the plugin is known by its Go type.
func readInfo(p plugin.Plugin) (info schema.Plugin, err error) {
	typeName := fmt.Sprintf("%T", p)
	if err := guard(typeName, "Info", func() error { info = p.Info(); return nil }); err != nil {
		return schema.Plugin{ID: typeName}, err
	}
	if info.APIVersion.IsZero() {
		info.APIVersion = schema.APIVersion
	}
	var errs []error
	if err := info.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := iface.CheckVersion("plugin API", schema.APIVersion, info.APIVersion); err != nil {
		errs = append(errs, fmt.Errorf("%w: plugin %q was built for a plugin API this host does not implement: %w", ErrUnsupported, info.ID, err))
	}
	return withTableInterfaces(info), errors.Join(errs...)
}

// Plugins returns the status of every plugin the host found, usable or
// not, sorted by ID and then path; plugin files broken before their ID
// was known come last. It works after Close too.
func (h *Host) Plugins() []PluginStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]PluginStatus, 0, len(h.sorted)+len(h.others))
	for _, rec := range h.sorted {
		out = append(out, rec.status())
	}
	out = append(out, h.others...)
	slices.SortStableFunc(out, func(a, b PluginStatus) int {
		if (a.Info.ID == "") != (b.Info.ID == "") {
			if a.Info.ID == "" {
				return 1
			}
			return -1
		}
		return cmp.Or(strings.Compare(a.Info.ID, b.Info.ID), strings.Compare(a.Path, b.Path))
	})
	return out
}

// Plugin returns the status of plugin id. If the host does not know it,
// the error wraps [ErrNotFound], and so does the status it returns, which
// cannot be taken for a plugin's: its State is [StateNotFound], its Err
// that error, its Info.ID id.
func (h *Host) Plugin(id string) (PluginStatus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec, ok := h.plugins[id]
	if !ok {
		err := h.notFound(id)
		return PluginStatus{Info: schema.Plugin{ID: id}, State: StateNotFound, Err: err}, err
	}
	return rec.status(), nil
}

func (rec *record) status() PluginStatus {
	st := PluginStatus{Info: rec.info, Path: rec.path, State: rec.state, Refs: rec.refs, Starts: rec.starts, Stops: rec.stops, Err: rec.unusable, Signer: rec.signer, Bundled: slices.Clone(rec.bundled)}
	if e, ok := rec.p.(interface{ Engine() string }); ok {
		st.Engine = e.Engine()
	}
	if st.Err == nil {
		st.Err = rec.lastErr
	}
	return st
}

// notFound returns the error for an unknown plugin ID, with the closest
// known ID as a suggestion. h.mu is held.
func (h *Host) notFound(id string) error {
	ids := make([]string, len(h.sorted))
	for i, rec := range h.sorted {
		ids[i] = rec.id
	}
	if near := suggest.Nearest(id, ids); near != "" {
		return fmt.Errorf("dynop: plugin %q: %w (did you mean %q?)", id, ErrNotFound, near)
	}
	return fmt.Errorf("dynop: plugin %q: %w", id, ErrNotFound)
}

// Close stops every started plugin, dependents before the plugins they
// depend on, and releases every reference that plugins hold. References
// the host program never released are reported in the error, wrapping
// [ErrLeaked]; so are errors from stopping plugins. A plugin that refuses
// to unload is stopped anyway.
//
// Close never pulls a plugin's code from under a reference that may still
// be used: calls through an interface go straight to the plugin (for a
// native plugin, into its mapped library), so a plugin whose interface the
// program still references stays started — with every plugin it depends
// on — until the program releases those references; the last Release stops
// it as it would on an open host. Operator instances and pass runs go
// through the host, which refuses them once their plugin stops, so Close
// revokes the references they hold and stops their plugins.
//
// After Close, every method but Plugins, Plugin and the Release of a
// leaked reference returns an error wrapping [ErrClosed].
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return fmt.Errorf("dynop: close: %w", ErrClosed)
	}
	h.closed = true
	var errs []error
	if err := h.dropLeaks(); err != nil {
		errs = append(errs, err)
	}
	for {
		next, busy := h.nextToClose(h.keptByLeaks())
		if busy != nil {
			done, st := busy.done, busy.state
			h.mu.Unlock()
			select {
			case <-done:
			case <-ctx.Done():
				// What is still starting or stopping finishes by itself: a
				// start that completes on a closed host stops the plugin.
				return errors.Join(append(errs, fmt.Errorf("dynop: close: waiting for plugin %q (%v): %w", busy.id, st, ctx.Err()))...)
			}
			h.mu.Lock()
			continue
		}
		if next == nil {
			break
		}
		cycle := next.refs > 0
		if cycle {
			// Only plugins hold references to it, and they are held by it
			// in turn: a cycle of references. Break it here.
			h.revokeRefsTo(next)
		}
		h.markStopping(next)
		h.mu.Unlock()
		if cycle {
			h.log.Warn("stopping a plugin still referenced by other plugins (reference cycle)", "plugin", next.id)
		}
		if err := h.stop(ctx, next, true); err != nil {
			errs = append(errs, err)
		}
		h.mu.Lock()
	}
	h.mu.Unlock()
	return errors.Join(errs...)
}

// nextToClose picks the next plugin Close stops, among the started ones
// not in kept: one that no other plugin references, the most recently
// started first; failing that, any. If a plugin is in transition it
// returns the record to wait for instead. h.mu is held.
func (h *Host) nextToClose(kept map[*record]bool) (next, busy *record) {
	for _, rec := range h.sorted {
		switch rec.state {
		case StateStarting, StateStopping:
			return nil, rec
		case StateStarted:
			if !kept[rec] && (next == nil || closeBefore(rec, next)) {
				next = rec
			}
		}
	}
	return next, nil
}

// closeBefore reports whether Close should stop a before b: unreferenced
// plugins first, then the most recently started.
func closeBefore(a, b *record) bool {
	if (a.refs == 0) != (b.refs == 0) {
		return a.refs == 0
	}
	return a.seq > b.seq
}

// revocable reports whether the host may drop a reference to e that the
// program still holds: true for the tables of operators and passes, whose
// calls the host gates and refuses once the plugin stops.
func revocable(e *entry) bool {
	return e.desc.UID == operatorsInterface.UID || e.desc.UID == passesInterface.UID
}

// keptByLeaks returns the plugins that the program's remaining references
// keep started: those it references, and, transitively, the plugins they
// hold references to. h.mu is held.
func (h *Host) keptByLeaks() map[*record]bool {
	if h.appRefs.head == nil {
		return nil
	}
	kept := make(map[*record]bool)
	var walk func(*record)
	walk = func(rec *record) {
		if kept[rec] {
			return
		}
		kept[rec] = true
		for s := rec.held.head; s != nil; s = s.next {
			walk(s.entry.rec)
		}
	}
	for s := h.appRefs.head; s != nil; s = s.next {
		walk(s.entry.rec)
	}
	return kept
}

// dropLeaks returns an error naming every reference the host program
// still holds, or nil, and releases those that are revocable (operator
// instances, passes); the others stay, and keep their plugins started. It
// stops nothing. h.mu is held.
func (h *Host) dropLeaks() error {
	if h.appRefs.head == nil {
		return nil
	}
	counts := make(map[*entry]int)
	var order []*entry
	for s := h.appRefs.head; s != nil; {
		next := s.next
		if counts[s.entry] == 0 {
			order = append(order, s.entry)
		}
		counts[s.entry]++
		if revocable(s.entry) {
			h.unref(s)
		}
		s = next
	}
	slices.SortFunc(order, func(a, b *entry) int {
		return cmp.Or(strings.Compare(a.rec.id, b.rec.id), strings.Compare(a.desc.Name, b.desc.Name))
	})
	parts := make([]string, len(order))
	var kept []string
	for i, e := range order {
		parts[i] = fmt.Sprintf("plugin %q interface %s (%d reference(s))", e.rec.id, e.desc, counts[e])
		if !revocable(e) && !slices.Contains(kept, e.rec.id) {
			kept = append(kept, e.rec.id)
		}
	}
	msg := strings.Join(parts, "; ")
	if kept != nil {
		msg += fmt.Sprintf("; kept started until released: %s", quoteAll(kept))
	}
	return fmt.Errorf("dynop: close: %w: %s", ErrLeaked, msg)
}

// quoteAll returns ids quoted and separated by commas.
func quoteAll(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	return strings.Join(q, ", ")
}

// revokeRefsTo drops every reference that plugins hold to rec. Only Close
// does this, to break reference cycles. h.mu is held.
func (h *Host) revokeRefsTo(rec *record) {
	for _, holder := range h.sorted {
		for s := holder.held.head; s != nil; {
			next := s.next
			if s.entry.rec == rec {
				h.unref(s)
			}
			s = next
		}
	}
}
