package machine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// ErrNoGPUProbe is [Machine.GPUErr] when no GPU probe is registered.
var ErrNoGPUProbe = errors.New("no GPU probe (import github.com/dynop/dynop/machine/nvml)")

// A gpuProbe lists the GPUs of one vendor; see [RegisterGPUProbe].
type gpuProbe func() ([]GPU, error)

// RegisterGPUProbe adds a probe that [Detect] runs, under a name for
// messages. A probe lists the GPUs of one vendor, through that vendor's
// library. It returns an error if it cannot list them, for example
// because the library is not installed; the error should say which
// library that is. Subpackages register probes from init (machine/nvml
// for NVIDIA). RegisterGPUProbe panics if name is empty, probe is nil or
// name is registered already.
func RegisterGPUProbe(name string, probe func() ([]GPU, error)) { probes.register(name, probe) }

// probes holds the registered GPU probes.
var probes probeSet

// probeSet is a set of named GPU probes.
type probeSet struct {
	mu     sync.Mutex
	probes map[string]gpuProbe
}

func (s *probeSet) register(name string, probe gpuProbe) {
	if name == "" {
		panic("machine: RegisterGPUProbe with an empty name")
	}
	if probe == nil {
		panic(fmt.Sprintf("machine: RegisterGPUProbe(%q) with a nil probe", name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.probes[name]; dup {
		panic(fmt.Sprintf("machine: GPU probe %q registered twice", name))
	}
	if s.probes == nil {
		s.probes = make(map[string]gpuProbe)
	}
	s.probes[name] = probe
}

// run runs every probe, in name order, and returns the GPUs the
// successful ones found. The error is nil if at least one probe succeeded,
// [ErrNoGPUProbe] if there are none, and otherwise holds every probe's
// error.
func (s *probeSet) run() ([]GPU, error) {
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.probes))
	list := make([]gpuProbe, len(names))
	for i, name := range names {
		list[i] = s.probes[name]
	}
	s.mu.Unlock()

	if len(list) == 0 {
		return nil, ErrNoGPUProbe
	}
	var (
		gpus []GPU
		errs probeErrors
	)
	for i, probe := range list {
		found, err := runProbe(names[i], probe)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		gpus = append(gpus, found...)
	}
	switch {
	case len(errs) < len(list):
		return gpus, nil
	case len(errs) == 1:
		return nil, errs[0]
	default:
		return nil, errs
	}
}

// runProbe calls probe and turns a panic into an error.
func runProbe(name string, probe gpuProbe) (gpus []GPU, err error) {
	defer func() {
		if v := recover(); v != nil {
			gpus, err = nil, fmt.Errorf("machine: GPU probe %q panicked: %v", name, v)
		}
	}()
	gpus, err = probe()
	if err != nil {
		return nil, err
	}
	return gpus, nil
}

// probeErrors are the errors of several failed probes. Unlike errors.Join
// it keeps them on one line, separated by "; ".
type probeErrors []error

func (e probeErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (e probeErrors) Unwrap() []error { return e }
