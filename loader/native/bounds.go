package native

/*
#include <stdlib.h>
#include <string.h>
#include <dynop/dynop.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"github.com/dynop/dynop/internal/abisession"
	"os"
	"unsafe"

	"github.com/dynop/dynop/tensor"
)

// ErrBounds reports a native operator that wrote outside an output it was
// given, caught by the bounds-checking mode ([CheckBoundsEnv]).
var ErrBounds = errors.New("the operator wrote outside its output")

// CheckBoundsEnv names the environment variable that turns on the
// bounds-checking mode of native operators: set to anything but "" or
// "0", every operator instance created afterwards runs its plugin's run
// on copies of its outputs in C memory with guard bytes before and after
// each, checks the guards when run returns, and fails the call with
// [ErrBounds] — naming plugin, operator, sample and output, and how many
// bytes were written where — instead of letting the write corrupt the Go
// heap silently. The WebAssembly loader catches the same writes with its
// guard bytes always. It costs a copy of every output each way; the
// repository's own plugin tests run with it.
const CheckBoundsEnv = "DYNOP_CHECK_BOUNDS"

// checkBounds reports whether [CheckBoundsEnv] turns the mode on.
func checkBounds() bool {
	v := os.Getenv(CheckBoundsEnv)
	return v != "" && v != "0"
}

const (
	// guardSize is the number of guard bytes on each side of an output.
	guardSize = 256
	// guardByte fills the guards; a kernel that writes it past the end of
	// an output goes unnoticed, one in 256 odds for each byte.
	guardByte = 0xA5
)

// guarded is an output's copy in C memory between its guards, or a
// sample's scratch (output -1, t nil).
type guarded struct {
	mem            unsafe.Pointer // guard, then n bytes of the output, then guard
	n              int            // the output's bytes from its base: byte offset + span
	t              *tensor.Tensor // the output
	sample, output int
}

func (g *guarded) data() []byte {
	return unsafe.Slice((*byte)(unsafe.Add(g.mem, guardSize)), g.n)
}

func (g *guarded) guards() (before, after []byte) {
	all := unsafe.Slice((*byte)(g.mem), g.n+2*guardSize)
	return all[:guardSize], all[guardSize+g.n:]
}

// goBytes returns the output's Go memory that g copies: from its base to
// the end of its last element.
func (g *guarded) goBytes() []byte {
	return unsafe.Slice((*byte)(g.t.Base()), g.n)
}

// violation describes how the guards of g were written, or "".
func (g *guarded) violation() string {
	before, after := g.guards()
	first, last := -1, -1
	for i, b := range before {
		if b != guardByte {
			first = i
			break
		}
	}
	for i := len(after) - 1; i >= 0; i-- {
		if after[i] != guardByte {
			last = i
			break
		}
	}
	switch {
	case first >= 0 && last >= 0:
		return fmt.Sprintf("it wrote up to %d byte(s) before its start and up to %d byte(s) past its end", guardSize-first, last+1)
	case first >= 0:
		return fmt.Sprintf("it wrote up to %d byte(s) before its start", guardSize-first)
	case last >= 0:
		return fmt.Sprintf("it wrote up to %d byte(s) past its end (of %d)", last+1, g.n)
	}
	return ""
}

// runChecked is Run in the bounds-checking mode: the plugin's run writes
// to guarded copies of the outputs, which are checked, then copied back.
func (im *nativeImpl) runChecked(outputs, inputs []*tensor.Batch) (err error) {
	samples, nin, nout := abisession.Samples(inputs), len(inputs), im.op.perSample()
	// The layout below points at C copies made for this call only.
	im.laidIn, im.laidOut = im.laidIn[:0], im.laidOut[:0]
	ts, _, err := im.layAll(samples, inputs, outputs, nout)
	if err != nil {
		return err
	}
	var copies []*guarded
	defer func() {
		for _, g := range copies {
			C.free(g.mem)
		}
	}()
	guard := func(g *guarded) error {
		// Aligned as the scratch must be (guardSize is a multiple of it),
		// and as outputs are.
		if C.posix_memalign(&g.mem, C.DYNOP_SCRATCH_ALIGN, C.size_t(g.n+2*guardSize)) != 0 {
			g.mem = nil
			return errors.New("native: out of C memory for a bounds-checked output")
		}
		copies = append(copies, g)
		before, after := g.guards()
		for k := range before {
			before[k], after[k] = guardByte, guardByte
		}
		return nil
	}
	per := nin + nout
	for i, b := range outputs {
		for j, t := range b.Samples() {
			g := &guarded{n: int(t.ByteOffset()) + len(t.Span()), t: t, sample: j, output: i}
			if err := guard(g); err != nil {
				return err
			}
			copy(g.data(), g.goBytes())
			im.ptrs[j*per+nin+i] = unsafe.Add(g.mem, guardSize)
		}
	}
	if im.op.scratch { // one guarded scratch per sample, to name the sample that overran it
		for j := range samples {
			g := &guarded{n: int(im.scratchBytes[j]), sample: j, output: -1}
			if err := guard(g); err != nil {
				return err
			}
			im.ptrs[j*per+nin+nout-1] = unsafe.Add(g.mem, guardSize)
		}
	}
	err = im.call("run", samples, nin, nout, ts)
	var bad []error
	for _, g := range copies {
		if v := g.violation(); v != "" {
			what := fmt.Sprintf("its scratch (%d bytes)", g.n)
			if g.output >= 0 {
				what = fmt.Sprintf("output %d (%q, %s)", g.output, im.op.schema.Outputs[g.output].Name, g.t)
			}
			// An op.Error names the operator, its plugin and the step.
			bad = append(bad, fmt.Errorf("native: sample %d: %w: %s: %s", g.sample, ErrBounds, what, v))
		}
	}
	if bad != nil {
		return errors.Join(append(bad, err)...)
	}
	for _, g := range copies {
		if g.output >= 0 {
			copy(g.goBytes(), g.data())
		}
	}
	return err
}
