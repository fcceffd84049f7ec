package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dynop/dynop/iface"
)

// APIVersion is the version of the dynop plugin API that this module
// implements. A plugin records the API version it was built against in
// [Plugin.APIVersion]; the host refuses a plugin whose API version is not
// [iface.Compatible] with its own, that is a plugin built for a newer API.
var APIVersion = iface.V(0, 1, 0)

// ErrPlugin reports plugin information that breaks the rules of
// [Plugin]. It is dynop.ErrInvalid.
var ErrPlugin = errors.New("invalid plugin info")

// Plugin describes a plugin: who it is, which versions it has, what it
// provides, what it needs and where it can run. A host reads it when it
// enumerates plugins, before any plugin starts, so it must be cheap to
// produce and must not change while the plugin is registered.
type Plugin struct {
	// ID names the plugin: vendor.plugin.name[.backend], see
	// [ValidatePluginID].
	ID string `json:"id"`
	// Version is the plugin's own version, bumped for any change to it.
	Version iface.Version `json:"version"`
	// APIVersion is the dynop plugin API the plugin was built against. The
	// zero value means the API of the host it is compiled into, which is
	// always right for Go plugins; loaders of native and WebAssembly
	// plugins require it to be set.
	APIVersion iface.Version `json:"api_version"`
	// Description says in a sentence what the plugin does.
	Description string `json:"description,omitempty"`
	// Author names who made it.
	Author string `json:"author,omitempty"`
	// Build identifies the build, for example a VCS revision.
	Build string `json:"build,omitempty"`
	// Interfaces lists every interface the plugin provides, at the version
	// it provides. Start must add exactly these.
	Interfaces []iface.Desc `json:"interfaces"`
	// Operators lists the schemas of the operators the plugin provides,
	// each with the devices it has backends for. Start must register
	// exactly these, with plugin.Registrar's RegisterOperator.
	Operators []Op `json:"operators,omitempty"`
	// Passes lists the graph passes the plugin provides. Start must
	// register exactly these, with plugin.Registrar's RegisterPass. A build
	// that needs one of them starts the plugin.
	Passes []Pass `json:"passes,omitempty"`
	// Needs lists the interfaces the plugin acquires from other plugins.
	Needs []Need `json:"needs,omitempty"`
	// Requirements says which machines the plugin can run on.
	Requirements Requirements `json:"requirements"`
}

// Need is an interface that a plugin acquires from another plugin.
// Interface.Version is the minimum version it needs.
type Need struct {
	// Plugin is the ID of the plugin that provides the interface.
	Plugin string `json:"plugin"`
	// Interface is the interface, at the least version needed.
	Interface iface.Desc `json:"interface"`
}

// Requirements is what a machine must offer for a plugin to run. A zero
// field means "no restriction". Checking requirements against the machine
// is the host's job (package machine's Machine.Check); the fields are
// data.
type Requirements struct {
	// OS lists the operating systems (GOOS values such as "linux") the
	// plugin runs on.
	OS []string `json:"os,omitempty"`
	// MinOSVersion is the oldest operating system release it runs on.
	MinOSVersion iface.Version `json:"min_os_version,omitzero"`
	// Arch lists the CPU architectures (GOARCH values such as "amd64").
	Arch []string `json:"arch,omitempty"`
	// CPUFeatures lists the CPU features every code path of the plugin
	// needs, in lower case as golang.org/x/sys/cpu names them ("avx2").
	CPUFeatures []string `json:"cpu_features,omitempty"`
	// GPU, if set, says which GPU the plugin needs.
	GPU *GPURequirements `json:"gpu,omitempty"`
	// Libraries lists shared libraries by soname ("libopenblas.so.0")
	// that the plugin needs from the system and the dynamic linker must
	// find: those it opens itself at run time. A native plugin's loader
	// checks the libraries its binary links against (DT_NEEDED) without
	// being told.
	Libraries []string `json:"libraries,omitempty"`
}

// GPURequirements is the GPU a plugin needs.
type GPURequirements struct {
	// Vendor is "nvidia", "amd" or "intel"; empty means any vendor.
	Vendor string `json:"vendor,omitempty"`
	// MinArch is the oldest GPU architecture supported, as a version; for
	// NVIDIA it is the CUDA compute capability (8.6 for Ampere GA10x).
	MinArch iface.Version `json:"min_arch,omitzero"`
	// MinDriver is the oldest driver version supported.
	MinDriver iface.Version `json:"min_driver,omitzero"`
}

// String describes the GPU g asks for, for example "an nvidia GPU with
// arch 8.6 or newer and driver 525.0.0 or newer".
func (g *GPURequirements) String() string {
	s := "a GPU"
	if g.Vendor != "" {
		// The article goes by sound: "an nvidia" is said "an en-vidia".
		article := "a"
		if g.Vendor == "nvidia" || strings.ContainsRune("aeiou", rune(g.Vendor[0])) {
			article = "an"
		}
		s = article + " " + g.Vendor + " GPU"
	}
	var with []string
	if !g.MinArch.IsZero() {
		with = append(with, "arch "+archString(g.MinArch)+" or newer")
	}
	if !g.MinDriver.IsZero() {
		with = append(with, "driver "+g.MinDriver.String()+" or newer")
	}
	if len(with) > 0 {
		s += " with " + strings.Join(with, " and ")
	}
	return s
}

// archString writes a GPU architecture as machine.ArchString does, "8.6"
// rather than "8.6.0" (package machine imports this one, so this one
// cannot import it).
func archString(v iface.Version) string {
	if v.Patch != 0 {
		return v.String()
	}
	return strconv.FormatUint(uint64(v.Major), 10) + "." + strconv.FormatUint(uint64(v.Minor), 10)
}

// The GPU vendors that [GPURequirements.Vendor] may name.
var gpuVendors = []string{"nvidia", "amd", "intel"}

// idRule is quoted in every error about a malformed plugin ID.
const idRule = `want vendor.plugin.name or vendor.plugin.name.backend: 3 or 4 dot-separated parts, ` +
	`the second literally "plugin", each part lower-case letters, digits, '_' or '-', starting with a letter`

// ValidatePluginID reports whether id follows dynop's (and NVIGI's) naming
// convention vendor.plugin.name[.backend], for example "acme.plugin.blur" or
// "acme.plugin.blur.cuda". The error wraps [ErrPlugin] and quotes the rule.
func ValidatePluginID(id string) error {
	if problem := idProblem(id); problem != "" {
		return fmt.Errorf("%w: plugin id %q %s: %s", ErrPlugin, clip(id), problem, idRule)
	}
	return nil
}

// MaxPluginIDLen is the longest plugin ID, in bytes. IDs name plugins in
// manifests, file names, logs and terminals; a longer one is a mistake or an
// attack, not a name.
const MaxPluginIDLen = 128

// idProblem says what is wrong with id, or "" if nothing is.
func idProblem(id string) string {
	if len(id) > MaxPluginIDLen {
		return fmt.Sprintf("is %d bytes long, more than %d", len(id), MaxPluginIDLen)
	}
	parts := strings.Split(id, ".")
	if len(parts) < 3 || len(parts) > 4 {
		return fmt.Sprintf("has %d part(s)", len(parts))
	}
	if parts[1] != "plugin" {
		return fmt.Sprintf("has second part %q", parts[1])
	}
	for _, p := range parts {
		if !validIDPart(p) {
			return fmt.Sprintf("has part %q", p)
		}
	}
	return ""
}

// clip returns s, or its first 40 bytes and an ellipsis if it is longer
// than MaxPluginIDLen: an error quotes a name, not 10 KB of it.
func clip(s string) string {
	if len(s) <= MaxPluginIDLen {
		return s
	}
	return strings.ToValidUTF8(s[:40], "") + "…"
}

func validIDPart(p string) bool {
	if p == "" || p[0] < 'a' || p[0] > 'z' {
		return false
	}
	for i := 1; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Validate checks everything about info that can be checked without a
// machine: the ID, interface descriptors (valid, no UID twice), needs
// (valid plugin IDs and interfaces, not the plugin itself), operator
// schemas (valid, no name twice), GPU vendor and library sonames.
// All problems are reported together; each wraps [ErrPlugin].
func (info Plugin) Validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: plugin %q: "+format, append([]any{ErrPlugin, clip(info.ID)}, args...)...))
	}
	if err := ValidatePluginID(info.ID); err != nil {
		errs = append(errs, err)
	}
	seen := make(map[iface.UID]string, len(info.Interfaces))
	for _, d := range info.Interfaces {
		if err := d.Validate(); err != nil {
			add("provides %v", err)
			continue
		}
		if other, dup := seen[d.UID]; dup {
			add("provides UID {%s} twice, as %q and %q", d.UID, other, d.Name)
		}
		seen[d.UID] = d.Name
	}
	ops := make(map[string]bool, len(info.Operators))
	for i := range info.Operators {
		s := &info.Operators[i]
		if err := s.Validate(); err != nil {
			add("provides %v", err)
		}
		if ops[s.Name] {
			add("provides operator %q twice", s.Name)
		}
		ops[s.Name] = true
	}
	passes := make(map[string]bool, len(info.Passes))
	for _, d := range info.Passes {
		if err := d.Validate(); err != nil {
			add("provides %v", err)
		}
		if passes[d.Name] {
			add("provides pass %q twice", d.Name)
		}
		passes[d.Name] = true
	}
	for _, n := range info.Needs {
		if n.Plugin == info.ID {
			add("needs interface %q from itself", n.Interface.Name)
		} else if problem := idProblem(n.Plugin); problem != "" {
			add("needs plugin id %q, which %s: %s", clip(n.Plugin), problem, idRule)
		}
		if err := n.Interface.Validate(); err != nil {
			add("needs %v", err)
		}
	}
	for _, lib := range info.Requirements.Libraries {
		if lib == "" || strings.ContainsAny(lib, "/, \t\n") || len(lib) > 255 {
			add("library %q is not a soname such as \"libopenblas.so.0\": no path, no comma, no space", clip(lib))
		}
	}
	if g := info.Requirements.GPU; g != nil && g.Vendor != "" && !slices.Contains(gpuVendors, g.Vendor) {
		add("GPU vendor %q is not one of %s", g.Vendor, strings.Join(gpuVendors, ", "))
	}
	return errors.Join(errs...)
}

// Pass returns the descriptor of pass name that info declares, and
// whether there is one.
func (info Plugin) Pass(name string) (Pass, bool) {
	for _, d := range info.Passes {
		if d.Name == name {
			return d, true
		}
	}
	return Pass{}, false
}

// Operator returns the schema of operator name that info declares, and
// whether there is one.
func (info Plugin) Operator(name string) (*Op, bool) {
	for i := range info.Operators {
		if info.Operators[i].Name == name {
			return &info.Operators[i], true
		}
	}
	return nil, false
}

// Provides returns the descriptor of the interface with the given UID that
// info declares, and whether there is one.
func (info Plugin) Provides(uid iface.UID) (iface.Desc, bool) {
	for _, d := range info.Interfaces {
		if d.UID == uid {
			return d, true
		}
	}
	return iface.Desc{}, false
}

// Diff returns "" if info and other describe the same plugin field for
// field, and otherwise names each field that differs with both values,
// for example `Version: 1.0.0 ≠ 1.1.0`. Fields are compared by their JSON
// form, so empty and nil lists are equal at any depth. Hosts use it to
// check that a plugin started is the plugin enumerated.
func (info Plugin) Diff(other Plugin) string {
	a, b := reflect.ValueOf(info), reflect.ValueOf(other)
	var diffs []string
	for i := range a.NumField() {
		fa, fb := a.Field(i).Interface(), b.Field(i).Interface()
		if !reflect.DeepEqual(jsonValue(fa), jsonValue(fb)) {
			diffs = append(diffs, fmt.Sprintf("%s: %v ≠ %v", a.Type().Field(i).Name, fa, fb))
		}
	}
	return strings.Join(diffs, "; ")
}

// jsonValue returns v as its JSON data, with empty lists made null.
func jsonValue(v any) any {
	j, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(j, &out) != nil {
		return v
	}
	var norm func(any) any
	norm = func(x any) any {
		switch x := x.(type) {
		case []any:
			if len(x) == 0 {
				return nil
			}
			for i := range x {
				x[i] = norm(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = norm(x[k])
			}
		}
		return x
	}
	return norm(out)
}
