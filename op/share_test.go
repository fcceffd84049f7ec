package op_test

import (
	"context"
	"testing"

	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// sharedScale is a test.Scale whose instances are safe for concurrent
// calls: Share returns it, and it counts its closes.
type sharedScale struct {
	scaleImpl
	closes int
}

func (s *sharedScale) Share() (op.Impl, bool) { return s, true }
func (s *sharedScale) Close() error           { s.closes++; return nil }

// TestInstanceShare: instances made with Share run one implementation,
// which is closed once, when the last of them closes; an operator that
// is not a SharedImpl is not shared.
func TestInstanceShare(t *testing.T) {
	ctx := context.Background()
	impl := &sharedScale{scaleImpl: scaleImpl{factor: 2}}
	r := op.NewRegistry(op.Options{})
	if err := r.Register(op.Operator{Schema: scaleSchema(), Backends: map[schema.Device]op.Factory{schema.CPU: func(*schema.Values) (op.Impl, error) { return impl, nil }}}); err != nil {
		t.Fatal(err)
	}
	first, err := r.New(ctx, "test.Scale", schema.Args{"count": 1})
	if err != nil {
		t.Fatal(err)
	}
	second, ok := first.Share()
	if !ok || second.Impl() != first.Impl() || second.Name() != "test.Scale" || second.Args() != first.Args() {
		t.Fatalf("Share = %v, %v: want an instance of the same operator and arguments over the same implementation", second, ok)
	}
	third, _ := second.Share()
	for _, in := range []*op.Instance{first, second, third} {
		outs, err := in.Exec(ctx, batchOf(t, "HW", []int64{1, 2}, 1, 2))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := tensor.Values[float32](outs[0].Sample(0)); got[1] != 4 {
			t.Errorf("2*2 = %v", got[1])
		}
	}
	for i, in := range []*op.Instance{second, first, third} {
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if want := min(i/2, 1); impl.closes != want {
			t.Errorf("after %d of 3 closes the implementation was closed %d times, want %d", i+1, impl.closes, want)
		}
	}
	if _, ok := first.Share(); ok {
		t.Error("a closed instance was shared")
	}

	plain, err := newRegistry(t).New(ctx, "test.Scale", schema.Args{"count": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, ok := plain.Share(); ok {
		t.Error("an instance whose implementation is not a SharedImpl was shared")
	}
}
