package testutil

import (
	"slices"
	"testing"

	"github.com/dynop/dynop/tensor"
)

// ReverseInputs returns the inputs the loaders' tests give test.Reverse,
// the operator of abi/testdata/scratch.c: one batch of three byte
// vectors of different lengths.
func ReverseInputs(t testing.TB) []*tensor.Batch {
	t.Helper()
	var samples []*tensor.Tensor
	for _, n := range []int{5, 64, 1} {
		data := make([]uint8, n)
		for i := range data {
			data[i] = uint8(i + 1)
		}
		x, err := tensor.FromSlice(data, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, x)
	}
	b, err := tensor.NewBatch(samples...)
	if err != nil {
		t.Fatal(err)
	}
	return []*tensor.Batch{b}
}

// CheckReversed checks test.Reverse's outputs for inputs: each sample
// reversed, and the scratch it ran with aligned to 64 bytes and as long
// as its setup asked (withScratch true), or none (false).
func CheckReversed(t testing.TB, outs, inputs []*tensor.Batch, withScratch bool) {
	t.Helper()
	for j, x := range inputs[0].Samples() {
		in, _ := tensor.Values[uint8](x)
		got, _ := tensor.Values[uint8](outs[0].Samples()[j])
		want := slices.Clone(in)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("sample %d: %v, want %v", j, got, want)
		}
		info, _ := tensor.Values[int64](outs[1].Samples()[j])
		wantInfo := []int64{0, int64(len(in)) + 3} // aligned, n+3 bytes
		if !withScratch {
			wantInfo = []int64{-1, -1}
		}
		if !slices.Equal(info, wantInfo) {
			t.Errorf("sample %d: scratch address %% 64 and length %v, want %v", j, info, wantInfo)
		}
	}
}
