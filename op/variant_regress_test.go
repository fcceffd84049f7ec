package op_test

// Regression tests from the review of CPU variants.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// the one-time verification is consumed by whatever the first Run
// sees. A first Run on an empty batch (or one too small to show the bug)
// compares nothing, yet the check never runs again: a wrong variant stays
// enabled for the registry's lifetime.
func TestRegressVerifyConsumedByEmptyFirstRun(t *testing.T) {
	var ran []string
	r := registryWith(t, fullCPU, true, nil, addOneOperator(&ran, map[string]string{"avx512": "wrong"}))
	ctx := context.Background()
	in, err := r.New(ctx, "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	empty, err := tensor.NewBatch()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Exec(ctx, empty); err != nil {
		t.Fatal(err)
	}
	in2, err := r.New(ctx, "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close()
	out, err := in2.Exec(ctx, bytesBatch(t, 9))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out[0].Sample(0).Bytes()
	for k, v := range got {
		if v != uint8(k*7)+1 {
			t.Errorf("VerifyVariants on: instance runs %q and output[%d] = %d, want %d: the wrong variant was never checked on data", in2.Variant(), k, v, uint8(k*7)+1)
		}
	}
}

// ctxOp is a variant that honours cancellation, as Go operators should.
type ctxOp struct {
	addOne
	sleep time.Duration
}

func (c *ctxOp) Run(ctx context.Context, out, in []*tensor.Batch) error {
	time.Sleep(c.sleep)
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.addOne.Run(ctx, out, in)
}

// a variant that fails during verification because the caller's
// context expired is disabled for good, as "disagreeing with the
// reference".
func TestRegressVerifyDisablesOnContextDeadline(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	mk := func(name string, needs dispatch.Features, sleep time.Duration) op.Variant {
		return op.Variant{Name: name, Needs: needs, Factory: func(*schema.Values) (op.Impl, error) {
			mu.Lock()
			defer mu.Unlock()
			return &ctxOp{addOne{name: name, ran: &ran}, sleep}, nil
		}}
	}
	o := addOneOperator(&ran, nil)
	o.Variants = map[schema.Device][]op.Variant{schema.CPU: {mk("avx2", avx2, 0), mk("scalar", 0, 0)}}
	// The reference is slow and does not look at ctx: make it so by
	// wrapping in a plain addOne that sleeps.
	o.Variants[schema.CPU][1].Factory = func(*schema.Values) (op.Impl, error) {
		return &slowRef{addOne{name: "scalar", ran: &ran}, 30 * time.Millisecond}, nil
	}
	r := registryWith(t, fullCPU, true, nil, o)
	in, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = in.Exec(ctx, bytesBatch(t, 9))
	t.Logf("first Exec (deadline 10ms): %v", err)
	ch, _ := r.Variants(context.Background(), "test.AddOne")
	if why := ch.Variants[0].Disabled; why != "" {
		t.Errorf("avx2 disabled after a context timeout: %s", why)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("deadline did not pass")
	}
}

type slowRef struct {
	addOne
	sleep time.Duration
}

func (s *slowRef) Run(ctx context.Context, out, in []*tensor.Batch) error {
	time.Sleep(s.sleep)
	return s.addOne.Run(ctx, out, in)
}

// verification runs the reference even when this CPU cannot run
// it (its needs are missing or turned off): dynop.h promises that "a
// variant is never called on a CPU that lacks what it needs".
func TestRegressVerifyRunsUnrunnableReference(t *testing.T) {
	var ran []string
	o := addOneOperator(&ran, nil)
	vs := o.Variants[schema.CPU]
	vs[2].Needs = avx512 // the reference needs AVX-512
	o.Variants[schema.CPU] = []op.Variant{vs[1], vs[2]}
	cpu := dispatch.CPU{Has: avx2.Closure()} // no AVX-512
	r := registryWith(t, cpu, true, nil, o)
	in, err := r.New(context.Background(), "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Exec(context.Background(), bytesBatch(t, 9)); err != nil {
		t.Fatal(err)
	}
	for _, v := range ran {
		if v == "scalar" {
			t.Errorf("ran %v: the reference, which needs %v, ran on a CPU with %v", ran, avx512, cpu.Available())
		}
	}
}

// if moving an instance off a disabled variant fails (the next
// variant's factory or Setup fails once), in.verify is already nil, so the
// next Run silently runs the variant verification just disabled.
func TestRegressFailedMoveKeepsDisabledVariant(t *testing.T) {
	var ran []string
	o := addOneOperator(&ran, map[string]string{"avx512": "wrong"})
	vs := o.Variants[schema.CPU]
	o.Variants[schema.CPU] = []op.Variant{vs[0], vs[2]} // avx512 (wrong), scalar
	scalar := vs[2].Factory
	calls := 0
	o.Variants[schema.CPU][1].Factory = func(v *schema.Values) (op.Impl, error) {
		calls++
		if calls == 2 { // the move after verification: fails once (out of memory, say)
			return nil, errors.New("transient failure")
		}
		return scalar(v)
	}
	r := registryWith(t, fullCPU, true, nil, o)
	ctx := context.Background()
	in, err := r.New(ctx, "test.AddOne", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	_, err = in.Exec(ctx, bytesBatch(t, 9))
	t.Logf("first Exec: %v", err)
	out, err := in.Exec(ctx, bytesBatch(t, 9))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := out[0].Sample(0).Bytes()
	ch, _ := r.Variants(ctx, "test.AddOne")
	if got[3] != uint8(3*7)+1 {
		t.Errorf("second Exec ran %q (disabled: %v) and returned a wrong element: %d, want %d", in.Variant(), ch.Variants[0].Disabled != "", got[3], uint8(3*7)+1)
	}
}
