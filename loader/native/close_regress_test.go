package native_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/plugins/vecmath"
)

// TestCloseWhileCallingInterface reproduces the audit's crash: Host.Close
// ran while 16 goroutines called an acquired native interface, dlclosed
// the library under them, and the next call jumped into unmapped code
// (SIGSEGV in vm_dot). Now Close reports the references as leaked and
// keeps the library mapped until the last of them is released; the calls
// before, during and after Close all compute, and the last Release
// unloads the library.
func TestCloseWhileCallingInterface(t *testing.T) {
	lib := cbuild.VecMath(t)
	cache := t.TempDir()
	iterations := 100
	if testing.Short() {
		iterations = 10
	}
	x := []float32{1, 2, 3}
	y := []float32{4, 5, 6}
	for i := range iterations {
		h, err := dynop.Open(ctx, dynop.Options{Paths: []string{lib}, NoRegistered: true, NoDefaultPaths: true,
			CacheDir: cache, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		const goroutines = 16
		var (
			wg      sync.WaitGroup
			calling sync.WaitGroup // every goroutine made a call
			closed  = make(chan struct{})
			bad     atomic.Int64
		)
		calling.Add(goroutines)
		for range goroutines {
			wg.Go(func() {
				m, ref, err := dynop.Acquire(ctx, h, vecmath.PluginID, vecmath.Interface)
				if err != nil {
					t.Error(err)
					calling.Done()
					return
				}
				first := true
				for n := 0; ; n++ {
					if m.Dot(x, y) != 32 {
						bad.Add(1)
					}
					if first {
						calling.Done()
						first = false
					}
					select {
					case <-closed:
						if n%7 == 0 { // a few calls after Close, then release
							if err := ref.Release(); err != nil {
								t.Errorf("Release after Close: %v", err)
							}
							return
						}
					default:
					}
				}
			})
		}
		calling.Wait()
		err = h.Close(ctx)
		close(closed)
		if !errors.Is(err, dynop.ErrLeaked) {
			t.Errorf("iteration %d: Close while 16 goroutines hold the interface = %v, want ErrLeaked", i, err)
		}
		wg.Wait()
		if n := bad.Load(); n != 0 {
			t.Fatalf("iteration %d: %d calls computed a wrong dot product", i, n)
		}
		st, err := h.Plugin(vecmath.PluginID)
		if err != nil || st.State != dynop.StateAvailable || st.Refs != 0 || st.Starts != st.Stops {
			t.Fatalf("iteration %d: after the last release: %+v, %v", i, st, err)
		}
		if cbuild.Mapped(t, lib) {
			t.Fatalf("iteration %d: %s is still mapped after its last reference went", i, lib)
		}
	}
}
