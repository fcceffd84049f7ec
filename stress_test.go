package dynop_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/plugin"
)

// TestStress runs 16 goroutines that acquire and release interfaces of
// plugins with shared dependencies at random, holding several references
// at a time. Every call through an acquired interface, and every call a
// stopping plugin makes into its dependencies, checks that the plugin
// called is started. At the end every count is zero and every plugin
// stopped exactly as often as it started.
func TestStress(t *testing.T) {
	//   top → mid → base
	//   top → side → base
	//   mid2 → base,  solo
	fakes := []*fake{
		newFake(nil, "top", "mid", "side"),
		newFake(nil, "mid", "base"),
		newFake(nil, "side", "base"),
		newFake(nil, "mid2", "base"),
		newFake(nil, "base"),
		newFake(nil, "solo"),
	}
	// Two plugins sometimes refuse to unload, one of them a dependency.
	for _, f := range []*fake{fakes[2], fakes[5]} {
		var n sync.Mutex
		calls := 0
		f.canUnload = func() bool { n.Lock(); defer n.Unlock(); calls++; return calls%3 != 0 }
	}
	ps := make([]plugin.Plugin, len(fakes))
	for i, f := range fakes {
		ps[i] = f
	}
	h := open(t, ps...)

	const goroutines = 16
	iterations := 1000
	if testing.Short() {
		iterations = 50
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			var held []dynop.Ref
			var counters []Counter
			for range iterations {
				if len(held) > 0 && (len(held) >= 4 || rng.IntN(2) == 0) {
					i := rng.IntN(len(held))
					counters[i].Calls()
					if err := held[i].Release(); err != nil {
						t.Errorf("Release: %v", err)
					}
					held = append(held[:i], held[i+1:]...)
					counters = append(counters[:i], counters[i+1:]...)
					continue
				}
				f := fakes[rng.IntN(len(fakes))]
				c, ref, err := dynop.Acquire(context.Background(), h, f.id, counterDef)
				if err != nil {
					t.Errorf("Acquire(%s): %v", f.id, err)
					continue
				}
				c.Calls()
				held = append(held, ref)
				counters = append(counters, c)
			}
			for _, ref := range held {
				if err := ref.Release(); err != nil {
					t.Errorf("Release: %v", err)
				}
			}
		})
	}
	wg.Wait()

	// Only references held by plugins are left: one for each started
	// plugin (one that refused to unload) that depends on it.
	status := make(map[string]dynop.PluginStatus)
	for _, st := range h.Plugins() {
		status[st.Info.ID] = st
	}
	for _, st := range status {
		want := 0
		for _, f := range fakes {
			if status[f.id].State == dynop.StateStarted && slices.Contains(f.deps, st.Info.ID) {
				want++
			}
		}
		if st.Refs != want {
			t.Errorf("%s: %d references left, want %d (held by started dependents)", st.Info.ID, st.Refs, want)
		}
		if st.State != dynop.StateAvailable && st.State != dynop.StateStarted {
			t.Errorf("%s: state %v after all goroutines finished", st.Info.ID, st.State)
		}
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	byID := make(map[string]*fake, len(fakes))
	for _, f := range fakes {
		byID[f.id] = f
	}
	for _, st := range h.Plugins() {
		f := byID[st.Info.ID]
		r, s, d, u := f.registers.Load(), f.starteds.Load(), f.deregisters.Load(), f.unloads.Load()
		if r == 0 || r != s || s != d || d != u || int64(st.Starts) != r || int64(st.Stops) != r {
			t.Errorf("%s: registers %d, started %d, deregisters %d, unloads %d, host counted %d starts and %d stops",
				f.id, r, s, d, u, st.Starts, st.Stops)
		}
		if v := f.violations.Load(); v != 0 {
			t.Errorf("%s: called %d times while not started", f.id, v)
		}
		if st.State != dynop.StateAvailable || st.Refs != 0 {
			t.Errorf("%s after Close: %+v", f.id, st)
		}
		t.Logf("%s: started and stopped %d times", f.id, r)
	}
}
