package wasm_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/loader/wasm"
)

// wclock builds testdata/wclock.c, a plugin granted nothing until asked
// for "clock", whose interface sleeps.
func wclock(t testing.TB) string {
	return fixture(t, "wclock.wasm", func(t testing.TB) string {
		return cbuild.Wasm(t, "wclock.wasm", []string{"loader/wasm/testdata/wclock.c"}, `-DDYNOP_WASM_CAPABILITIES="clock"`)
	})
}

// sleeper acquires wclock's interface from a host granting the clock,
// with deadline as the call deadline.
func sleeper(t *testing.T, deadline time.Duration) *wasm.Table {
	t.Helper()
	h := openHost(t, dynop.Options{Loaders: []dynop.LoaderConfig{wasm.Config{Grant: []string{"clock"}, CallTimeout: deadline}}}, wclock(t))
	impl, ref, err := h.Acquire(context.Background(), "dynop.plugin.wclock", iface.MustParseUID("7A0F44C2-1D93-4B6E-8C05-3E916A27B410"), iface.V(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Release() })
	return impl.(*wasm.Table)
}

var i32 = []wasm.ValueType{wasm.I32}

// nap calls the interface's nap(ms): the milliseconds the module's
// monotonic clock says it slept, and how long the call took.
func nap(ctx context.Context, tbl *wasm.Table, ms int) (slept int32, took time.Duration, err error) {
	start := time.Now()
	out, err := tbl.Call(ctx, 0, i32, i32, uint64(ms))
	took = time.Since(start)
	if err != nil {
		return 0, took, err
	}
	return int32(out[0]), took, nil
}

// A module granted the clock sleeps through an interface call for as
// long as it asks (the call's end is the interface call's, not that of
// the last operator or register call, long over), and a sleep past the
// call deadline is stopped at the deadline.
func TestTableCallSleeps(t *testing.T) {
	const deadline = 300 * time.Millisecond
	tbl := sleeper(t, deadline)
	for range 2 {
		slept, took, err := nap(context.Background(), tbl, 40)
		if err != nil {
			t.Fatal(err)
		}
		if slept < 40 || took < 40*time.Millisecond {
			t.Errorf("nap(40): the module slept %d ms, the call took %v", slept, took)
		}
	}
	_, took, err := nap(context.Background(), tbl, 10_000)
	testutil.WantErr(t, err, context.DeadlineExceeded, "slot 0", "deadline", "the module instance was discarded")
	if took < deadline || took > 2*deadline {
		t.Errorf("a 10 s sleep with a %v deadline was stopped after %v", deadline, took)
	}
	_, _, err = nap(context.Background(), tbl, 1)
	testutil.WantErr(t, err, dynop.ErrState, "first module instance was discarded")
}

// A call stopped by its caller's cancellation says why: the context's
// error, and the cause its canceller gave.
func TestTableCallCancelCause(t *testing.T) {
	tbl := sleeper(t, 5*time.Second)
	cause := errors.New("the user pressed stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(cause) })
	slept, took, err := nap(ctx, tbl, 3000)
	if err == nil {
		t.Fatalf("nap(3000) cancelled after 50 ms returned %d ms after %v, no error", slept, took)
	}
	testutil.WantErr(t, err, context.Canceled, "the user pressed stop")
	if !errors.Is(err, cause) {
		t.Errorf("%v: does not wrap the cause", err)
	}
	if took > time.Second {
		t.Errorf("the cancelled call took %v", took)
	}
}

// Calls refused before the module runs anything leave the interface
// working: a context already done, types Call does not pass, a function
// the engine cannot call. The errors say what is wrong.
func TestTableCallRefusals(t *testing.T) {
	tbl := sleeper(t, 0)
	works := func(after string) {
		t.Helper()
		if _, _, err := nap(context.Background(), tbl, 0); err != nil {
			t.Fatalf("after %s: %v", after, err)
		}
	}
	works("start")

	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("shutting down"))
	_, _, err := nap(ctx, tbl, 0)
	testutil.WantErr(t, err, context.Canceled, "slot 0", "did not start", "shutting down")
	works("a cancelled context")

	for _, c := range []struct {
		params, results []wasm.ValueType
		says            string
	}{
		{[]wasm.ValueType{0x7b}, i32, "parameter 0 has type v128: Call passes i32, i64, f32 and f64 only"},
		{i32, []wasm.ValueType{0x70}, "result 0 has type funcref"},
		{i32, []wasm.ValueType{0x6f}, "result 0 has type externref"},
		{[]wasm.ValueType{wasm.I32, 0x42}, i32, "parameter 1 has type type0x42"},
	} {
		args := make([]uint64, len(c.params))
		_, err := tbl.Call(context.Background(), 0, c.params, c.results, args...)
		testutil.WantErr(t, err, dynop.ErrInvalid, c.says)
		works(c.says)
	}

	// sum9 takes nine parameters: Wasmtime's calls through dynop take at
	// most eight, wazero's any number.
	nine := slices.Repeat(i32, 9)
	out, err := tbl.Call(context.Background(), 1, nine, i32, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	if wasm.Engines()[0] == "wasmtime" {
		testutil.WantErr(t, err, dynop.ErrUnsupported, "slot 1", "func(i32, i32, i32, i32, i32, i32, i32, i32, i32) (i32)", "at most 8 parameters")
	} else if err != nil || out[0] != 45 {
		t.Errorf("sum9(1…9) = %v, %v; want 45", out, err)
	}
	works("sum9")
}
