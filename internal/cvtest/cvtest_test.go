package cvtest

import (
	"bytes"
	"fmt"
	"testing"
)

func TestRunRoundTrips(t *testing.T) {
	in := Array{DType: "uint8", Shape: []int64{2, 3}, Data: []byte{1, 2, 3, 4, 5, 6}}
	outs := Run(t, "outputs = [inputs[0].T, cv2.flip(inputs[0], 1).astype(np.float32)]", in)
	if len(outs) != 2 {
		t.Fatalf("%d outputs, want 2", len(outs))
	}
	if got := outs[0]; got.DType != "uint8" || len(got.Shape) != 2 || got.Shape[0] != 3 || got.Shape[1] != 2 || !bytes.Equal(got.Data, []byte{1, 4, 2, 5, 3, 6}) {
		t.Errorf("transpose: %+v", got)
	}
	if got := outs[1]; got.DType != "float32" || len(got.Data) != 24 {
		t.Errorf("flip as float32: %+v", got)
	}
}

func TestRunReportsPythonErrors(t *testing.T) {
	Require(t)
	ft := &fakeT{T: t}
	func() {
		defer func() { recover() }()
		Run(ft, "raise ValueError('no such thing')")
	}()
	if !ft.failed || !bytes.Contains([]byte(ft.msg), []byte("no such thing")) {
		t.Errorf("a raising script: failed %v, message %q", ft.failed, ft.msg)
	}
}

// fakeT records a fatal failure instead of ending the test.
type fakeT struct {
	*testing.T
	failed bool
	msg    string
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed, f.msg = true, fmt.Sprintf(format, args...)
	panic("fatal")
}
