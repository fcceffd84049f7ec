package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// wasiTestMemory is a linear memory in a byte slice, as the tests hand it to
// the WASI functions: like wazero's, a read is a view of the memory.
type wasiTestMemory struct{ b []byte }

// Size, Read, Write and the rest implement memory, checking bounds as
// wazero's does.
func (m *wasiTestMemory) Size() uint32 { return uint32(len(m.b)) }

func (m *wasiTestMemory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m.b)) {
		return nil, false
	}
	return m.b[off : off+n : off+n], true
}

func (m *wasiTestMemory) Write(off uint32, v []byte) bool {
	b, ok := m.Read(off, uint32(len(v)))
	if ok {
		copy(b, v)
	}
	return ok
}

func (m *wasiTestMemory) ReadUint32Le(off uint32) (uint32, bool) {
	b, ok := m.Read(off, 4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (m *wasiTestMemory) WriteUint32Le(off, v uint32) bool {
	b, ok := m.Read(off, 4)
	if ok {
		binary.LittleEndian.PutUint32(b, v)
	}
	return ok
}

func (m *wasiTestMemory) ReadUint64Le(off uint32) (uint64, bool) {
	b, ok := m.Read(off, 8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

func (m *wasiTestMemory) WriteUint64Le(off uint32, v uint64) bool {
	b, ok := m.Read(off, 8)
	if ok {
		binary.LittleEndian.PutUint64(b, v)
	}
	return ok
}

var _ memory = (*wasiTestMemory)(nil)

// Where the tests put things in memory (two 64 KiB pages).
const (
	tMemSize  = 2 * pageSize
	tRes      = 0x100  // results, 64 bytes apart
	tIovs     = 0x400  // iovec arrays
	tBuf      = 0x800  // buffers
	tPath     = 0xc00  // a path, "a.txt"
	tSubs     = 0x1000 // poll_oneoff's subscriptions
	tEvents   = 0x2000 // and events
	tEnvPtrs  = 0x3000 // environ_get's pointers
	tEnvBuf   = 0x4000 // and strings
	tPattern  = 0xa5   // what memory holds where nothing was written
	tPathName = "a.txt"
)

// newWASITestMemory returns a memory filled with tPattern.
func newWASITestMemory() *wasiTestMemory {
	return &wasiTestMemory{b: bytes.Repeat([]byte{tPattern}, tMemSize)}
}

// wasiFunctionNamed returns WASI function name.
func wasiFunctionNamed(t testing.TB, name string) wasiFunction {
	t.Helper()
	i := slices.IndexFunc(wasiFunctions, func(f wasiFunction) bool { return f.name == name })
	if i < 0 {
		t.Fatalf("no WASI function %s", name)
	}
	return wasiFunctions[i]
}

// wasiCall calls WASI function name in w with params and returns its
// errno.
func wasiCall(t testing.TB, w *wasiEnv, name string, params ...uint64) uint32 {
	t.Helper()
	f := wasiFunctionNamed(t, name)
	if len(params) != len(f.params) {
		t.Fatalf("%s takes %d params, the test gave %d", name, len(f.params), len(params))
	}
	stack := make([]uint64, max(len(params), 1))
	copy(stack, params)
	f.fn(w, stack)
	return uint32(stack[0])
}

// putTestIovecs writes an iovec array at at: each buffer an offset and a
// length.
func putTestIovecs(m memory, at uint32, bufs ...[2]uint32) {
	for i, b := range bufs {
		m.WriteUint32Le(at+8*uint32(i), b[0])
		m.WriteUint32Le(at+8*uint32(i)+4, b[1])
	}
}

// testSubscription is one of poll_oneoff's subscriptions.
type testSubscription struct {
	userdata uint64
	typ      byte
	fd       uint32 // fd_read and fd_write
	timeout  uint64 // clock: relative nanoseconds
	flags    uint16 // clock: 1 is absolute
}

// putTestSubscriptions writes subs at tSubs as the spec lays them out.
func putTestSubscriptions(m memory, subs ...testSubscription) {
	for i, s := range subs {
		b, _ := m.Read(tSubs+uint32(i)*wasiSubscriptionSize, wasiSubscriptionSize)
		clear(b)
		binary.LittleEndian.PutUint64(b[0:], s.userdata)
		b[8] = s.typ
		if s.typ == wasiEventClock {
			binary.LittleEndian.PutUint32(b[16:], wasiClockMonotonic)
			binary.LittleEndian.PutUint64(b[24:], s.timeout)
			binary.LittleEndian.PutUint16(b[40:], s.flags)
		} else {
			binary.LittleEndian.PutUint32(b[16:], s.fd)
		}
	}
}

// testEvent is one of poll_oneoff's events, as read from memory.
type testEvent struct {
	userdata uint64
	errno    uint16
	typ      byte
}

// readTestEvents reads the n events at tEvents.
func readTestEvents(m memory, n uint32) []testEvent {
	var evs []testEvent
	for i := range n {
		b, _ := m.Read(tEvents+i*wasiEventSize, wasiEventSize)
		evs = append(evs, testEvent{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint16(b[8:]), b[10]})
	}
	return evs
}

// memU32 reads the uint32 at off; 0 outside the memory.
func memU32(m memory, off uint32) uint32 { v, _ := m.ReadUint32Le(off); return v }

// memU64 reads the uint64 at off; 0 outside the memory.
func memU64(m memory, off uint32) uint64 { v, _ := m.ReadUint64Le(off); return v }

// TestWASIFunctionsTable checks the table engines define the imports
// from: every function once, in order, each returning an errno but
// proc_exit.
func TestWASIFunctionsTable(t *testing.T) {
	if len(wasiFunctions) != 46 {
		t.Errorf("%d functions, want the 46 of WASI preview 1", len(wasiFunctions))
	}
	if !slices.IsSortedFunc(wasiFunctions, func(a, b wasiFunction) int { return strings.Compare(a.name, b.name) }) {
		t.Error("wasiFunctions are not sorted by name")
	}
	seen := map[string]bool{}
	for _, f := range wasiFunctions {
		if seen[f.name] {
			t.Errorf("%s is there twice", f.name)
		}
		seen[f.name] = true
		if f.fn == nil {
			t.Errorf("%s has no implementation", f.name)
		}
		// Every function returns an errno but proc_exit, which does
		// not return.
		if want := wasiErrnoResult; f.name == "proc_exit" && f.results != nil || f.name != "proc_exit" && !slices.Equal(f.results, want) {
			t.Errorf("%s returns %v", f.name, f.results)
		}
	}
	if wasiModuleName != wasi_snapshot_preview1.ModuleName {
		t.Errorf("wasiModuleName is %q, wazero's is %q", wasiModuleName, wasi_snapshot_preview1.ModuleName)
	}
}

// TestWASISignaturesMatchWazero checks that a module linking with
// wazero's WASI links with this one: the same names, the same types.
func TestWASISignaturesMatchWazero(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		t.Fatal(err)
	}
	theirs := rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions()
	ours := map[string]wasiFunction{}
	for _, f := range wasiFunctions {
		ours[f.name] = f
	}
	for name, d := range theirs {
		f, ok := ours[name]
		if !ok {
			t.Errorf("wazero defines %s, wasiFunctions do not", name)
			continue
		}
		if !slices.Equal(wasiValTypes(d.ParamTypes()), f.params) || !slices.Equal(wasiValTypes(d.ResultTypes()), f.results) {
			t.Errorf("%s: wazero's is %v -> %v, ours %v -> %v", name, d.ParamTypes(), d.ResultTypes(), f.params, f.results)
		}
	}
	for name := range ours {
		if _, ok := theirs[name]; !ok {
			t.Errorf("wasiFunctions define %s, wazero does not", name)
		}
	}
}

// wasiValTypes converts wazero's value types to ours: both are the binary
// encoding.
func wasiValTypes(ts []api.ValueType) []valType {
	var vs []valType
	for _, t := range ts {
		vs = append(vs, valType(t))
	}
	return vs
}

// wasiAPITypes converts our value types to wazero's.
func wasiAPITypes(ts []valType) []api.ValueType {
	var vs []api.ValueType
	for _, t := range ts {
		vs = append(vs, api.ValueType(t))
	}
	return vs
}

// TestWASIArgs checks that a plugin has no arguments, whatever it is
// granted.
func TestWASIArgs(t *testing.T) {
	m := newWASITestMemory()
	w := newWASIEnv(m, map[string]bool{"env": true, "clock": true, "random": true, "stdio": true}, io.Discard)
	if e := wasiCall(t, w, "args_sizes_get", tRes, tRes+8); e != 0 || memU32(m, tRes) != 0 || memU32(m, tRes+8) != 0 {
		t.Errorf("args_sizes_get: errno %d, %d args in %d bytes; want no arguments", e, memU32(m, tRes), memU32(m, tRes+8))
	}
	before := slices.Clone(m.b)
	// With no arguments, pointers at the very end of memory are fine.
	if e := wasiCall(t, w, "args_get", tMemSize, tMemSize); e != 0 {
		t.Errorf("args_get at the end of memory: errno %d", e)
	}
	if e := wasiCall(t, w, "args_get", tRes, tBuf); e != 0 || !bytes.Equal(before, m.b) {
		t.Errorf("args_get: errno %d, or it wrote to memory", e)
	}
}

// TestWASIEnviron checks environ_get's layout (a pointer to each
// NUL-terminated string, the strings back to back as the sizes said),
// that the environment is the host's when the instance was made, and
// that there is none without "env".
func TestWASIEnviron(t *testing.T) {
	t.Setenv("DYNOP_WASI_TEST", "x=1 y")
	m := newWASITestMemory()
	w := newWASIEnv(m, map[string]bool{"env": true}, nil)
	t.Setenv("DYNOP_WASI_TEST_LATER", "1") // after the snapshot: not seen

	if e := wasiCall(t, w, "environ_sizes_get", tRes, tRes+8); e != 0 {
		t.Fatalf("environ_sizes_get: errno %d", e)
	}
	count, size := memU32(m, tRes), memU32(m, tRes+8)
	if tEnvBuf+size > tMemSize {
		t.Skipf("the environment (%d bytes) does not fit the test's memory", size)
	}
	if e := wasiCall(t, w, "environ_get", tEnvPtrs, tEnvBuf); e != 0 {
		t.Fatalf("environ_get: errno %d", e)
	}
	// Each pointer is to a NUL-terminated string in the buffer, one
	// after the other, filling exactly the size counted.
	var got []string
	next := uint32(tEnvBuf)
	for i := range count {
		p := memU32(m, tEnvPtrs+4*i)
		if p != next {
			t.Fatalf("string %d is at %#x, want %#x, right after the one before", i, p, next)
		}
		end := bytes.IndexByte(m.b[p:tEnvBuf+size], 0)
		if end < 0 {
			t.Fatalf("string %d is not NUL-terminated within the size", i)
		}
		got = append(got, string(m.b[p:p+uint32(end)]))
		next = p + uint32(end) + 1
	}
	if next != tEnvBuf+size {
		t.Errorf("the strings end at %#x, the size says %#x", next, tEnvBuf+size)
	}
	if m.b[tEnvPtrs+4*count] != tPattern || m.b[tEnvBuf+size] != tPattern {
		t.Error("environ_get wrote past the pointers or the strings")
	}
	if !slices.Contains(got, "DYNOP_WASI_TEST=x=1 y") {
		t.Error("the environment lacks DYNOP_WASI_TEST=x=1 y")
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "DYNOP_WASI_TEST_LATER=") {
			t.Error("the environment is not the one when the instance was made")
		}
	}
	if want := len(os.Environ()) - 1; len(got) != want {
		t.Errorf("%d variables, want the process's %d", len(got), want)
	}

	// Without "env" there is no environment, and nothing is written.
	m = newWASITestMemory()
	w = newWASIEnv(m, map[string]bool{"clock": true, "random": true, "stdio": true}, io.Discard)
	if e := wasiCall(t, w, "environ_sizes_get", tRes, tRes+8); e != 0 || memU32(m, tRes) != 0 || memU32(m, tRes+8) != 0 {
		t.Errorf("without env: environ_sizes_get: errno %d, %d strings in %d bytes", e, memU32(m, tRes), memU32(m, tRes+8))
	}
	before := slices.Clone(m.b)
	if e := wasiCall(t, w, "environ_get", tEnvPtrs, tEnvBuf); e != 0 || !bytes.Equal(before, m.b) {
		t.Errorf("without env: environ_get: errno %d, or it wrote", e)
	}
}

// TestWASIFakeClocks checks the clocks of an instance without "clock":
// wazero's defaults (internal/platform/time.go), per instance.
func TestWASIFakeClocks(t *testing.T) {
	m := newWASITestMemory()
	a := newWASIEnv(m, nil, nil)
	b := newWASIEnv(m, nil, nil)
	read := func(w *wasiEnv, id uint64) uint64 {
		t.Helper()
		if e := wasiCall(t, w, "clock_time_get", id, 1, tRes); e != 0 {
			t.Fatalf("clock_time_get(%d): errno %d", id, e)
		}
		return memU64(m, tRes)
	}
	const epoch = 1640995200 * uint64(time.Second) // 2022-01-01T00:00:00Z
	ms := uint64(time.Millisecond)
	for i := range uint64(3) {
		if got := read(a, wasiClockRealtime); got != epoch+i*ms {
			t.Errorf("realtime reading %d: %d, want %d", i, got, epoch+i*ms)
		}
	}
	for i := range uint64(3) {
		if got := read(a, wasiClockMonotonic); got != i*ms {
			t.Errorf("monotonic reading %d: %d, want %d", i, got, i*ms)
		}
	}
	// Another instance's clocks start over.
	if got := read(b, wasiClockRealtime); got != epoch {
		t.Errorf("a second instance's first realtime reading: %d, want %d", got, epoch)
	}
	if got := read(b, wasiClockMonotonic); got != 0 {
		t.Errorf("a second instance's first monotonic reading: %d, want 0", got)
	}
	if time.Unix(0, int64(epoch)).UTC() != time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC) {
		t.Error("the fake epoch is not 2022-01-01")
	}
	testWASIClockRes(t, a, m)
	testWASIClockIDs(t, a, m)
}

// testWASIClockRes checks the resolutions, the same granted or not.
func testWASIClockRes(t *testing.T, w *wasiEnv, m *wasiTestMemory) {
	t.Helper()
	for id, want := range map[uint64]uint64{wasiClockRealtime: 1000, wasiClockMonotonic: 1} {
		if e := wasiCall(t, w, "clock_res_get", id, tRes); e != 0 || memU64(m, tRes) != want {
			t.Errorf("clock_res_get(%d): errno %d, %d ns; want %d ns", id, e, memU64(m, tRes), want)
		}
	}
}

// testWASIClockIDs checks that only realtime and monotonic are clocks.
func testWASIClockIDs(t *testing.T, w *wasiEnv, m *wasiTestMemory) {
	t.Helper()
	for _, id := range []uint64{2, 3, 4, 1 << 31} {
		if e := wasiCall(t, w, "clock_time_get", id, 0, tRes); e != uint32(errnoInval) {
			t.Errorf("clock_time_get(%d): errno %d, want EINVAL", id, e)
		}
		if e := wasiCall(t, w, "clock_res_get", id, tRes); e != uint32(errnoInval) {
			t.Errorf("clock_res_get(%d): errno %d, want EINVAL", id, e)
		}
	}
}

// TestWASIRealClocks checks the clocks of an instance granted "clock":
// the time of day, and a monotonic clock shared by instances.
func TestWASIRealClocks(t *testing.T) {
	m := newWASITestMemory()
	w := newWASIEnv(m, map[string]bool{"clock": true}, nil)
	read := func(id uint64) int64 {
		t.Helper()
		if e := wasiCall(t, w, "clock_time_get", id, 1, tRes); e != 0 {
			t.Fatalf("clock_time_get(%d): errno %d", id, e)
		}
		return int64(memU64(m, tRes))
	}
	before := time.Now().UnixNano()
	wall := read(wasiClockRealtime)
	after := time.Now().UnixNano()
	if wall < before || wall > after {
		t.Errorf("realtime %d is not between %d and %d", wall, before, after)
	}
	m0 := read(wasiClockMonotonic)
	time.Sleep(5 * time.Millisecond)
	m1 := read(wasiClockMonotonic)
	if m0 <= 0 || m1-m0 < int64(5*time.Millisecond) {
		t.Errorf("monotonic %d, then %d 5 ms later", m0, m1)
	}
	// Another instance reads the same monotonic clock.
	w = newWASIEnv(m, map[string]bool{"clock": true}, nil)
	if m2 := read(wasiClockMonotonic); m2 < m1 {
		t.Errorf("another instance's monotonic clock reads %d, after %d", m2, m1)
	}
	testWASIClockRes(t, w, m)
	testWASIClockIDs(t, w, m)
}

// TestWASIRandom checks random_get: one deterministic stream per instance
// without "random", however it is asked for, and real randomness with it.
func TestWASIRandom(t *testing.T) {
	get := func(w *wasiEnv, m *wasiTestMemory, n uint32) []byte {
		t.Helper()
		copy(m.b, newWASITestMemory().b)
		if e := wasiCall(t, w, "random_get", tBuf, uint64(n)); e != 0 {
			t.Fatalf("random_get(%d): errno %d", n, e)
		}
		if m.b[tBuf+n] != tPattern {
			t.Fatalf("random_get(%d) wrote past its buffer", n)
		}
		return slices.Clone(m.b[tBuf : tBuf+n])
	}
	// Without "random", every instance gets the same bytes, one stream
	// however the module asks for them.
	m := newWASITestMemory()
	a, b := newWASIEnv(m, nil, nil), newWASIEnv(m, nil, nil)
	whole := get(a, m, 64)
	parts := slices.Concat(get(b, m, 5), get(b, m, 0), get(b, m, 11), get(b, m, 48))
	if !bytes.Equal(whole, parts) {
		t.Errorf("without random: one instance got %x, another in parts %x", whole, parts)
	}
	if bytes.Count(whole, []byte{whole[0]}) == len(whole) {
		t.Errorf("without random: %x is not random-looking", whole)
	}
	// With it, instances differ (by 2^-512 chance otherwise).
	c, d := newWASIEnv(m, map[string]bool{"random": true}, nil), newWASIEnv(m, map[string]bool{"random": true}, nil)
	rc, rd := get(c, m, 64), get(d, m, 64)
	if bytes.Equal(rc, rd) || bytes.Equal(rc, whole) {
		t.Errorf("with random: two instances got %x and %x (the fake source %x)", rc, rd, whole)
	}
}

// wasiWriteTwo writes a and b to fd with fd_write, an iovec each, and
// returns the errno and the count written.
func wasiWriteTwo(t *testing.T, w *wasiEnv, m *wasiTestMemory, fd uint64, a, b string) (uint32, uint32) {
	t.Helper()
	copy(m.b[tBuf:], a)
	copy(m.b[tBuf+256:], b)
	putTestIovecs(m, tIovs, [2]uint32{tBuf, uint32(len(a))}, [2]uint32{tBuf + 256, uint32(len(b))})
	m.WriteUint32Le(tRes, 0xdeadbeef)
	e := wasiCall(t, w, "fd_write", fd, tIovs, 2, tRes)
	return e, memU32(m, tRes)
}

// TestWASIStdio checks fd_write and fd_read on stdio, with "stdio" and
// without.
func TestWASIStdio(t *testing.T) {
	var out bytes.Buffer
	m := newWASITestMemory()
	w := newWASIEnv(m, map[string]bool{"stdio": true}, &out)
	for _, fd := range []uint64{wasiStdout, wasiStderr} {
		if e, n := wasiWriteTwo(t, w, m, fd, "hello, ", "world\n"); e != 0 || n != 13 {
			t.Errorf("fd_write(%d): errno %d, %d written; want 13", fd, e, n)
		}
	}
	if got := out.String(); got != "hello, world\nhello, world\n" {
		t.Errorf("stdout and stderr wrote %q", got)
	}
	// stdin is at its end, and stdout and stderr cannot be read.
	putTestIovecs(m, tIovs, [2]uint32{tBuf, 16})
	m.WriteUint32Le(tRes, 77)
	if e := wasiCall(t, w, "fd_read", wasiStdin, tIovs, 1, tRes); e != 0 || memU32(m, tRes) != 0 {
		t.Errorf("fd_read(stdin): errno %d, %d read; want 0", e, memU32(m, tRes))
	}
	for _, fd := range []uint64{wasiStdout, wasiStderr, 3} {
		if e := wasiCall(t, w, "fd_read", fd, tIovs, 1, tRes); e != uint32(errnoBadf) {
			t.Errorf("fd_read(%d): errno %d, want EBADF", fd, e)
		}
	}
	for _, fd := range []uint64{wasiStdin, 3, math.MaxUint32} {
		if e, _ := wasiWriteTwo(t, w, m, fd, "x", "y"); e != uint32(errnoBadf) {
			t.Errorf("fd_write(%d): errno %d, want EBADF", fd, e)
		}
	}
	if out.Len() != 26 {
		t.Errorf("failed writes wrote %q", out.String()[26:])
	}

	// Without "stdio" the bytes count as written and go nowhere, even
	// with a writer given.
	var none bytes.Buffer
	w = newWASIEnv(m, nil, &none)
	if e, n := wasiWriteTwo(t, w, m, wasiStderr, "lost ", "words\n"); e != 0 || n != 11 || none.Len() != 0 {
		t.Errorf("without stdio: fd_write: errno %d, %d written, %q out; want 11 written, none out", e, n, none.String())
	}

	// A writer's failure is EIO.
	w = newWASIEnv(m, map[string]bool{"stdio": true}, wasiFailingWriter{})
	if e, _ := wasiWriteTwo(t, w, m, wasiStdout, "a", "b"); e != uint32(errnoIo) {
		t.Errorf("fd_write to a failing writer: errno %d, want EIO", e)
	}
}

// wasiFailingWriter fails every write.
type wasiFailingWriter struct{}

func (wasiFailingWriter) Write([]byte) (int, error) { return 0, errors.New("no") }

// TestWASIStdioFds checks what the fd functions say about stdin, stdout
// and stderr.
func TestWASIStdioFds(t *testing.T) {
	m := newWASITestMemory()
	w := newWASIEnv(m, nil, nil)
	for fd := uint64(0); fd < 3; fd++ {
		if e := wasiCall(t, w, "fd_fdstat_get", fd, tRes); e != 0 {
			t.Fatalf("fd_fdstat_get(%d): errno %d", fd, e)
		}
		// wasi-libc's isatty: a character device that cannot seek or
		// tell, so C's stdout is line-buffered.
		rights := memU64(m, tRes+8)
		const seek, tell, read, write = 1 << 2, 1 << 5, 1 << 1, 1 << 6
		if m.b[tRes] != wasiFiletypeCharacterDevice || rights&(seek|tell) != 0 || rights&(read|write) != read|write {
			t.Errorf("fd_fdstat_get(%d): filetype %d, rights %#x", fd, m.b[tRes], rights)
		}
		if flags, inheriting := binary.LittleEndian.Uint16(m.b[tRes+2:]), memU64(m, tRes+16); flags != 0 || inheriting != 0 {
			t.Errorf("fd_fdstat_get(%d): flags %#x, inheriting rights %#x", fd, flags, inheriting)
		}
		if e := wasiCall(t, w, "fd_filestat_get", fd, tRes); e != 0 || m.b[tRes+16] != wasiFiletypeCharacterDevice || memU64(m, tRes+24) != 1 || memU64(m, tRes+32) != 0 {
			t.Errorf("fd_filestat_get(%d): errno %d, filetype %d, nlink %d, size %d", fd, e, m.b[tRes+16], memU64(m, tRes+24), memU64(m, tRes+32))
		}
	}
	putTestIovecs(m, tIovs, [2]uint32{tBuf, 8})
	for _, c := range []struct {
		name   string
		params []uint64
		want   wasiErrno
	}{
		{"fd_seek", []uint64{1, 0, 0, tRes}, errnoSpipe},
		{"fd_tell", []uint64{2, tRes}, errnoSpipe},
		{"fd_pread", []uint64{0, tIovs, 1, 0, tRes}, errnoSpipe},
		{"fd_pwrite", []uint64{1, tIovs, 1, 0, tRes}, errnoSpipe},
		{"fd_prestat_get", []uint64{0, tRes}, errnoBadf},
		{"fd_prestat_get", []uint64{3, tRes}, errnoBadf},
		{"fd_prestat_dir_name", []uint64{3, tBuf, 8}, errnoBadf},
		{"fd_renumber", []uint64{1, 5}, errnoNotsup},
		{"fd_renumber", []uint64{5, 1}, errnoBadf},
		{"fd_renumber", []uint64{1, math.MaxUint32}, errnoBadf},
		{"fd_fdstat_set_flags", []uint64{1, 0}, errnoSuccess},
		{"fd_fdstat_set_flags", []uint64{1, 1}, errnoSuccess}, // append
		{"fd_fdstat_set_flags", []uint64{1, wasiFdflagNonblock}, errnoNosys},
		{"fd_fdstat_set_flags", []uint64{1, wasiFdflagSync}, errnoInval},
		{"fd_fdstat_set_rights", []uint64{1, 0, 0}, errnoNosys},
		{"fd_advise", []uint64{1, 0, 10, 5}, errnoSuccess},
		{"fd_advise", []uint64{1, 0, 10, 6}, errnoInval},
		{"fd_allocate", []uint64{1, 0, 0}, errnoSuccess},
		{"fd_allocate", []uint64{1, 0, 10}, errnoNosys},
		{"fd_allocate", []uint64{1, 1 << 63, 0}, errnoInval},
		{"fd_sync", []uint64{1}, errnoSuccess},
		{"fd_datasync", []uint64{2}, errnoSuccess},
		{"fd_filestat_set_size", []uint64{1, 0}, errnoNosys},
		{"fd_filestat_set_times", []uint64{1, 0, 0, wasiFstAtimNow}, errnoNosys},
		{"fd_filestat_set_times", []uint64{1, 0, 0, wasiFstMtim | wasiFstMtimNow}, errnoInval},
		{"fd_readdir", []uint64{1, tBuf, 64, 0, tRes}, errnoBadf},
		{"fd_readdir", []uint64{1, tBuf, 8, 0, tRes}, errnoInval},
		{"path_open", []uint64{1, 0, tPath, 5, 0, 0, 0, 0, tRes}, errnoNotdir},
		{"path_open", []uint64{3, 0, tPath, 5, 0, 0, 0, 0, tRes}, errnoBadf},
		{"path_readlink", []uint64{1, tPath, 0, tBuf, 8, tRes}, errnoInval},
		{"path_symlink", []uint64{tPath, 5, 1, tPath, 5}, errnoNotdir},
		{"path_filestat_set_times", []uint64{1, 0, tPath, 5, 0, 0, wasiFstAtim | wasiFstAtimNow}, errnoInval},
		{"sock_send", []uint64{1, tIovs, 1, 1, tRes}, errnoNotsup},
		{"sock_shutdown", []uint64{1, 3}, errnoBadf},
		{"sched_yield", nil, errnoSuccess},
		{"proc_raise", []uint64{9}, errnoNosys},
	} {
		if e := wasiCall(t, w, c.name, c.params...); e != uint32(c.want) {
			t.Errorf("%s%v: errno %d, want %d", c.name, c.params, e, c.want)
		}
	}
}

// TestWASIFdClose checks that a closed stdio fd is bad from then on.
func TestWASIFdClose(t *testing.T) {
	var out bytes.Buffer
	m := newWASITestMemory()
	w := newWASIEnv(m, map[string]bool{"stdio": true}, &out)
	if e := wasiCall(t, w, "fd_close", wasiStdout); e != 0 {
		t.Fatalf("fd_close(stdout): errno %d", e)
	}
	if e, _ := wasiWriteTwo(t, w, m, wasiStdout, "a", "b"); e != uint32(errnoBadf) || out.Len() != 0 {
		t.Errorf("fd_write to a closed stdout: errno %d, %q out", e, out.String())
	}
	if e := wasiCall(t, w, "fd_fdstat_get", wasiStdout, tRes); e != uint32(errnoBadf) {
		t.Errorf("fd_fdstat_get of a closed stdout: errno %d", e)
	}
	if e := wasiCall(t, w, "fd_close", wasiStdout); e != uint32(errnoBadf) {
		t.Errorf("fd_close of a closed stdout: errno %d", e)
	}
	if e, n := wasiWriteTwo(t, w, m, wasiStderr, "a", "b"); e != 0 || n != 2 || out.String() != "ab" {
		t.Errorf("stderr after closing stdout: errno %d, %d written, %q out", e, n, out.String())
	}
	for fd := uint64(3); fd < 6; fd++ {
		if e := wasiCall(t, w, "fd_close", fd); e != uint32(errnoBadf) {
			t.Errorf("fd_close(%d): errno %d, want EBADF", fd, e)
		}
	}
}

// wasiArgSpecs say what each parameter of each function is, for the
// tables below: "f" an fd, "v" a value, "rN" a pointer to N bytes, "b" a
// buffer pointer and "l" its length, "i" an iovec array and "c" its
// count, "S" poll_oneoff's subscriptions, "E" its events and "n" their
// count.
var wasiArgSpecs = map[string]string{
	"args_get":                "r0 r0",
	"args_sizes_get":          "r4 r4",
	"clock_res_get":           "v r8",
	"clock_time_get":          "v v r8",
	"environ_get":             "r0 r0",
	"environ_sizes_get":       "r4 r4",
	"fd_advise":               "f v v v",
	"fd_allocate":             "f v v",
	"fd_close":                "f",
	"fd_datasync":             "f",
	"fd_fdstat_get":           "f r24",
	"fd_fdstat_set_flags":     "f v",
	"fd_fdstat_set_rights":    "f v v",
	"fd_filestat_get":         "f r64",
	"fd_filestat_set_size":    "f v",
	"fd_filestat_set_times":   "f v v v",
	"fd_pread":                "f i c v r4",
	"fd_prestat_dir_name":     "f b l",
	"fd_prestat_get":          "f r8",
	"fd_pwrite":               "f i c v r4",
	"fd_read":                 "f i c r4",
	"fd_readdir":              "f b l v r4",
	"fd_renumber":             "f v",
	"fd_seek":                 "f v v r8",
	"fd_sync":                 "f",
	"fd_tell":                 "f r8",
	"fd_write":                "f i c r4",
	"path_create_directory":   "f b l",
	"path_filestat_get":       "f v b l r64",
	"path_filestat_set_times": "f v b l v v v",
	"path_link":               "f v b l v b l",
	"path_open":               "f v b l v v v v r4",
	"path_readlink":           "f b l b l r4",
	"path_remove_directory":   "f b l",
	"path_rename":             "f b l v b l",
	"path_symlink":            "b l f b l",
	"path_unlink_file":        "f b l",
	"poll_oneoff":             "S E n r4",
	"proc_exit":               "v",
	"proc_raise":              "v",
	"random_get":              "b l",
	"sched_yield":             "",
	"sock_accept":             "f v r4",
	"sock_recv":               "f i c v r4 r2",
	"sock_send":               "f i c v r4",
	"sock_shutdown":           "f v",
}

// wasiArgs returns the params of a call of the function spec describes,
// every pointer in memory (64 bytes apart, buffers of 32 bytes, arrays of
// two iovecs, one subscription) and every fd fd; and the kinds of the
// params.
func wasiArgs(spec string, fd uint64) ([]uint64, []string) {
	kinds := strings.Fields(spec)
	params := make([]uint64, len(kinds))
	for i, k := range kinds {
		switch k[0] {
		case 'f':
			params[i] = fd
		case 'r':
			params[i] = tRes + 64*uint64(i)
		case 'b':
			params[i] = tBuf + 64*uint64(i)
		case 'l':
			params[i] = 32
		case 'i':
			params[i] = tIovs
		case 'c':
			params[i] = 2
		case 'S':
			params[i] = tSubs
		case 'E':
			params[i] = tEvents
		case 'n':
			params[i] = 1
		}
	}
	return params, kinds
}

// wasiPrepare lays out what wasiArgs points to: iovecs of 8 bytes in tBuf,
// a clock subscription and a path.
func wasiPrepare(m memory) {
	putTestIovecs(m, tIovs, [2]uint32{tBuf, 8}, [2]uint32{tBuf + 8, 8})
	putTestSubscriptions(m, testSubscription{userdata: 1, typ: wasiEventClock, timeout: 1})
	m.Write(tPath, []byte(tPathName))
}

// TestWASIArgSpecs checks that wasiArgSpecs, which the fault and bad-fd
// tables use, describe every function's params.
func TestWASIArgSpecs(t *testing.T) {
	for _, f := range wasiFunctions {
		spec, ok := wasiArgSpecs[f.name]
		if !ok {
			t.Errorf("no spec for %s", f.name)
			continue
		}
		if n := len(strings.Fields(spec)); n != len(f.params) {
			t.Errorf("%s: the spec has %d params, the function %d", f.name, n, len(f.params))
		}
	}
}

// TestWASIFault calls every function that takes a pointer with each of
// its pointers in turn out of the memory: each fails with EFAULT, and
// writes nothing, whatever else is wrong or right with the call.
func TestWASIFault(t *testing.T) {
	for _, f := range wasiFunctions {
		params, kinds := wasiArgs(wasiArgSpecs[f.name], wasiStdout)
		for i, k := range kinds {
			var bad [][]uint64 // params with pointer i out of memory
			with := func(vals ...uint64) {
				for _, v := range vals {
					p := slices.Clone(params)
					p[i] = v
					bad = append(bad, p)
				}
			}
			switch k[0] {
			case 'r':
				n := uint64(k[1] - '0')
				if len(k) > 2 {
					n = n*10 + uint64(k[2]-'0')
				}
				with(tMemSize-n+1, math.MaxUint32)
			case 'b':
				with(tMemSize-32+1, math.MaxUint32)
			case 'i':
				with(tMemSize-16+1, math.MaxUint32)
				// An iovec of the array pointing out of memory.
				p := slices.Clone(params)
				p[i] = tIovs + 1024
				bad = append(bad, p)
			case 'S':
				with(tMemSize-wasiSubscriptionSize+1, math.MaxUint32)
			case 'E':
				with(tMemSize-wasiEventSize+1, math.MaxUint32)
			default:
				continue
			}
			for _, p := range bad {
				var out bytes.Buffer
				m := newWASITestMemory()
				w := newWASIEnv(m, map[string]bool{"stdio": true, "env": true, "clock": true}, &out)
				wasiPrepare(m)
				putTestIovecs(m, tIovs+1024, [2]uint32{tBuf, 8}, [2]uint32{tMemSize - 4, 8})
				before := slices.Clone(m.b)
				if e := wasiCall(t, w, f.name, p...); e != uint32(errnoFault) {
					t.Errorf("%s%#x: errno %d, want EFAULT", f.name, p, e)
				}
				if !bytes.Equal(before, m.b) || out.Len() != 0 {
					t.Errorf("%s%#x wrote", f.name, p)
				}
			}
		}
	}
}

// TestWASIBadFd calls every function that takes an fd with one that is
// not open: EBADF, but for fd_fdstat_set_rights, which is ENOSYS for
// every fd.
func TestWASIBadFd(t *testing.T) {
	for _, fd := range []uint64{3, 4, math.MaxInt32, math.MaxUint32, wasiStderr} {
		for _, f := range wasiFunctions {
			params, kinds := wasiArgs(wasiArgSpecs[f.name], fd)
			if !slices.Contains(kinds, "f") {
				continue
			}
			m := newWASITestMemory()
			w := newWASIEnv(m, nil, nil)
			wasiPrepare(m)
			if fd == wasiStderr {
				// A closed fd is as bad as one never open.
				if e := wasiCall(t, w, "fd_close", wasiStderr); e != 0 {
					t.Fatalf("fd_close(stderr): errno %d", e)
				}
			}
			want := errnoBadf
			if f.name == "fd_fdstat_set_rights" {
				want = errnoNosys
			}
			if e := wasiCall(t, w, f.name, params...); e != uint32(want) {
				t.Errorf("%s%v: errno %d, want %d", f.name, params, e, want)
			}
		}
	}
}

// TestWASIProcExit checks that proc_exit panics with its code, for the
// engine to end the call with.
func TestWASIProcExit(t *testing.T) {
	w := newWASIEnv(newWASITestMemory(), nil, nil)
	defer func() {
		err, ok := recover().(error)
		var exit *exitError
		if !ok || !errors.As(err, &exit) || exit.code != 3 {
			t.Fatalf("proc_exit(3) panicked with %v, want an exitError with code 3", err)
		}
		if got := err.Error(); got != "the module exited with code 3" {
			t.Errorf("the exit error says %q", got)
		}
	}()
	wasiCall(t, w, "proc_exit", 3)
	t.Fatal("proc_exit returned")
}

// TestWASIPollOneoff checks which subscriptions become events, how long
// the call waits, and the calls it refuses.
func TestWASIPollOneoff(t *testing.T) {
	poll := func(w *wasiEnv, m *wasiTestMemory, subs ...testSubscription) (uint32, []testEvent, time.Duration) {
		t.Helper()
		putTestSubscriptions(m, subs...)
		m.WriteUint32Le(tRes, 0xdeadbeef)
		start := time.Now()
		e := wasiCall(t, w, "poll_oneoff", tSubs, tEvents, uint64(len(subs)), tRes)
		took := time.Since(start)
		if e != 0 {
			return e, nil, took
		}
		n := memU32(m, tRes)
		// The events not written are zeroed.
		for _, b := range m.b[tEvents+n*wasiEventSize : tEvents+uint32(len(subs))*wasiEventSize] {
			if b != 0 {
				t.Fatal("poll_oneoff left garbage after its events")
			}
		}
		return e, readTestEvents(m, n), took
	}
	clock := func(ud uint64, d time.Duration) testSubscription {
		return testSubscription{userdata: ud, typ: wasiEventClock, timeout: uint64(d)}
	}
	fdRead := func(ud uint64, fd uint32) testSubscription {
		return testSubscription{userdata: ud, typ: wasiEventFdRead, fd: fd}
	}
	fdWrite := func(ud uint64, fd uint32) testSubscription {
		return testSubscription{userdata: ud, typ: wasiEventFdWrite, fd: fd}
	}

	m := newWASITestMemory()
	fake := newWASIEnv(m, nil, nil)
	// Without "clock" a sleep returns at once, its event reported.
	if e, evs, took := poll(fake, m, clock(7, time.Hour)); e != 0 || !slices.Equal(evs, []testEvent{{7, 0, wasiEventClock}}) || took > time.Second {
		t.Errorf("without clock, an hour's sleep: errno %d, events %v, took %v", e, evs, took)
	}

	timed := newWASIEnv(m, map[string]bool{"clock": true}, nil)
	// With it, the call sleeps until the nearest timeout, and reports
	// the clocks that reached it.
	if e, evs, took := poll(timed, m, clock(1, time.Hour), clock(2, 20*time.Millisecond)); e != 0 || !slices.Equal(evs, []testEvent{{2, 0, wasiEventClock}}) || took < 20*time.Millisecond || took > 10*time.Second {
		t.Errorf("with clock, 20 ms and an hour: errno %d, events %v, took %v", e, evs, took)
	}
	// An fd subscription is ready at once, so no clock waits, and only
	// a clock of no time is an event with it.
	e, evs, took := poll(timed, m, clock(1, time.Hour), fdRead(2, wasiStdin), fdWrite(3, wasiStdout), fdWrite(4, wasiStderr),
		clock(5, 0), fdRead(6, wasiStdout), fdWrite(7, wasiStdin), fdRead(8, 9), fdWrite(9, 9))
	want := []testEvent{
		{2, 0, wasiEventFdRead}, {3, 0, wasiEventFdWrite}, {4, 0, wasiEventFdWrite}, {5, 0, wasiEventClock},
		{6, uint16(errnoBadf), wasiEventFdRead}, {7, uint16(errnoBadf), wasiEventFdWrite},
		{8, uint16(errnoBadf), wasiEventFdRead}, {9, uint16(errnoBadf), wasiEventFdWrite},
	}
	if e != 0 || !slices.Equal(evs, want) || took > 10*time.Second {
		t.Errorf("fd subscriptions: errno %d, events %v (want %v), took %v", e, evs, want, took)
	}
	// A sleep ends with the call it is in.
	done := make(chan struct{})
	timed.setDone(done)
	time.AfterFunc(10*time.Millisecond, func() { close(done) })
	if e, _, took := poll(timed, m, clock(1, time.Hour)); e != uint32(errnoIntr) || took > 10*time.Second {
		t.Errorf("a sleep whose call ends: errno %d after %v, want EINTR", e, took)
	}
	timed.setDone(nil)

	for _, c := range []struct {
		what string
		subs []testSubscription
		want wasiErrno
	}{
		{"an absolute clock", []testSubscription{{typ: wasiEventClock, flags: 1}}, errnoNotsup},
		{"an unknown clock flag", []testSubscription{{typ: wasiEventClock, flags: 2}}, errnoInval},
		{"an unknown type", []testSubscription{fdRead(1, 0), {typ: 3}}, errnoInval},
		{"a negative fd", []testSubscription{fdRead(1, 0), fdWrite(2, math.MaxUint32)}, errnoBadf},
	} {
		before := slices.Clone(m.b)
		if e, _, _ := poll(fake, m, c.subs...); e != uint32(c.want) {
			t.Errorf("%s: errno %d, want %d", c.what, e, c.want)
		}
		if !bytes.Equal(before[tEvents:tEvents+0x100], m.b[tEvents:tEvents+0x100]) {
			t.Errorf("%s: events written", c.what)
		}
	}
	if e := wasiCall(t, fake, "poll_oneoff", tSubs, tEvents, 0, tRes); e != uint32(errnoInval) {
		t.Errorf("no subscriptions: errno %d, want EINVAL", e)
	}
}

// TestWASINoAllocs checks that the functions a module calls most — the
// clocks, writing stdout, random bytes — allocate nothing.
func TestWASINoAllocs(t *testing.T) {
	for _, caps := range []map[string]bool{nil, {"clock": true, "random": true, "stdio": true}} {
		m := newWASITestMemory()
		w := newWASIEnv(m, caps, io.Discard)
		wasiPrepare(m)
		for _, c := range []struct {
			name   string
			params []uint64
		}{
			{"clock_time_get", []uint64{wasiClockRealtime, 0, tRes}},
			{"clock_time_get", []uint64{wasiClockMonotonic, 0, tRes}},
			{"fd_write", []uint64{wasiStdout, tIovs, 2, tRes}},
			{"random_get", []uint64{tBuf, 32}},
		} {
			f := wasiFunctionNamed(t, c.name)
			stack := make([]uint64, len(c.params))
			f.fn(w, stack) // a first call may set up (the fake random source)
			if n := testing.AllocsPerRun(100, func() {
				copy(stack, c.params)
				f.fn(w, stack)
			}); n != 0 || stack[0] != 0 {
				t.Errorf("%s%v with %v: errno %d, %v allocations", c.name, c.params, caps, stack[0], n)
			}
		}
	}
}

// wasiShimModule returns a module that imports every WASI function and
// exports a function of the same name and type that calls it, and a
// memory of two pages: what lets a test call the WASI functions as a
// module does, on wazero's WASI or on ours.
func wasiShimModule() []byte {
	uleb := func(b []byte, v uint32) []byte {
		for ; v >= 0x80; v >>= 7 {
			b = append(b, byte(v)|0x80)
		}
		return append(b, byte(v))
	}
	name := func(b []byte, s string) []byte { return append(uleb(b, uint32(len(s))), s...) }
	n := uint32(len(wasiFunctions))
	types, imports, funcs, exports, code := uleb(nil, n), uleb(nil, n), uleb(nil, n), uleb(nil, n+1), uleb(nil, n)
	exports = append(name(exports, "memory"), 2, 0)
	for i, f := range wasiFunctions {
		types = append(types, 0x60)
		types = uleb(types, uint32(len(f.params)))
		for _, p := range f.params {
			types = append(types, byte(p))
		}
		types = uleb(types, uint32(len(f.results)))
		for _, r := range f.results {
			types = append(types, byte(r))
		}
		imports = uleb(append(name(name(imports, wasiModuleName), f.name), 0), uint32(i))
		funcs = uleb(funcs, uint32(i))
		exports = uleb(append(name(exports, f.name), 0), n+uint32(i))
		body := []byte{0} // no locals
		for j := range f.params {
			body = uleb(append(body, 0x20), uint32(j)) // local.get j
		}
		body = append(uleb(append(body, 0x10), uint32(i)), 0x0b) // call i; end
		code = append(uleb(code, uint32(len(body))), body...)
	}
	mod := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range []struct {
		id      byte
		content []byte
	}{{1, types}, {2, imports}, {3, funcs}, {5, []byte{1, 0, tMemSize / pageSize}}, {7, exports}, {10, code}} {
		mod = append(uleb(append(mod, s.id), uint32(len(s.content))), s.content...)
	}
	return mod
}

// wasiShim is the shim module instantiated in a wazero runtime, on
// wazero's WASI or on ours.
type wasiShim struct {
	mod api.Module
	mem api.Memory
	out *bytes.Buffer // stdout and stderr, with "stdio"
}

// newWASIShim instantiates the shim on wazero's WASI (ours false) or on
// wasiFunctions, granted caps ("stdio" and "env" only: the real clocks
// and randomness cannot be compared), its memory filled with tPattern.
func newWASIShim(t *testing.T, ours bool, caps map[string]bool) *wasiShim {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	s := &wasiShim{out: new(bytes.Buffer)}
	mc := wazero.NewModuleConfig()
	var w *wasiEnv
	if ours {
		w = newWASIEnv(nil, caps, s.out)
		b := rt.NewHostModuleBuilder(wasiModuleName)
		for _, f := range wasiFunctions {
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
				f.fn(w, stack)
			}), wasiAPITypes(f.params), wasiAPITypes(f.results)).Export(f.name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		// As newInstance (module.go) configures wazero's WASI.
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			t.Fatal(err)
		}
		if caps["stdio"] {
			mc = mc.WithStdout(s.out).WithStderr(s.out)
		}
		if caps["env"] {
			for _, kv := range os.Environ() {
				if k, v, ok := strings.Cut(kv, "="); ok {
					mc = mc.WithEnv(k, v)
				}
			}
		}
	}
	mod, err := rt.InstantiateWithConfig(ctx, wasiShimModule(), mc)
	if err != nil {
		t.Fatal(err)
	}
	s.mod, s.mem = mod, mod.Memory()
	if w != nil {
		w.setMemory(s.mem)
	}
	b, _ := s.mem.Read(0, s.mem.Size())
	for i := range b {
		b[i] = tPattern
	}
	return s
}

// call calls WASI function name through the shim: its errno, or the
// error of a call that failed.
func (s *wasiShim) call(name string, params ...uint64) (uint32, error) {
	r, err := s.mod.ExportedFunction(name).Call(context.Background(), params...)
	if err != nil {
		return 0, err
	}
	return uint32(r[0]), nil
}

// bytes returns the whole of the shim's memory.
func (s *wasiShim) bytes() []byte {
	b, _ := s.mem.Read(0, s.mem.Size())
	return b
}

// wasiStep is a call in a test against wazero, after its setup.
type wasiStep struct {
	name   string
	params []uint64
	setup  func(m memory)
	// errnoOnly compares only the errno: wazero writes some results
	// before it finds the call fails; this WASI writes nothing then.
	errnoOnly bool
}

// wasiIovs returns a setup that puts an iovec array at tIovs.
func wasiIovs(bufs ...[2]uint32) func(memory) {
	return func(m memory) { putTestIovecs(m, tIovs, bufs...) }
}

// wasiSubs returns a setup that puts subscriptions at tSubs.
func wasiSubs(s ...testSubscription) func(memory) {
	return func(m memory) { putTestSubscriptions(m, s...) }
}

// wasiSameSteps are calls to which wazero's WASI and ours answer the
// same, in errno, memory and output, made in this order (the fake clocks
// and random source, and fd_close, carry state from one to the next).
var wasiSameSteps = []wasiStep{
	{name: "args_sizes_get", params: []uint64{tRes, tRes + 8}},
	{name: "args_get", params: []uint64{tRes, tBuf}},
	{name: "args_get", params: []uint64{tMemSize + 1, tBuf}},
	{name: "environ_sizes_get", params: []uint64{tRes, tRes + 8}},
	{name: "environ_get", params: []uint64{tEnvPtrs, tEnvBuf}},
	{name: "environ_get", params: []uint64{tMemSize - 3, tEnvBuf}},
	{name: "environ_sizes_get", params: []uint64{tRes, tMemSize - 2}},
	{name: "clock_res_get", params: []uint64{0, tRes}},
	{name: "clock_res_get", params: []uint64{1, tRes + 8}},
	{name: "clock_res_get", params: []uint64{2, tRes}},
	{name: "clock_res_get", params: []uint64{0, tMemSize - 7}},
	{name: "clock_time_get", params: []uint64{0, 0, tRes}},
	{name: "clock_time_get", params: []uint64{0, 1, tRes + 8}},
	{name: "clock_time_get", params: []uint64{1, 0, tRes + 16}},
	{name: "clock_time_get", params: []uint64{1, 0, tRes + 24}},
	{name: "clock_time_get", params: []uint64{0, 0, tRes + 32}},
	{name: "clock_time_get", params: []uint64{3, 0, tRes}},
	{name: "random_get", params: []uint64{tBuf + 100, 5}},
	{name: "random_get", params: []uint64{tBuf + 200, 11}},
	{name: "random_get", params: []uint64{tBuf + 300, 0}},
	{name: "random_get", params: []uint64{tMemSize - 2, 3}},
	{name: "random_get", params: []uint64{tBuf + 400, 64}},
	{name: "fd_write", params: []uint64{1, tIovs, 2, tRes}, setup: wasiIovs([2]uint32{tBuf, 7}, [2]uint32{tBuf + 7, 6})},
	{name: "fd_write", params: []uint64{2, tIovs, 2, tRes}},
	{name: "fd_write", params: []uint64{1, tIovs, 0, tRes + 8}},
	{name: "fd_write", params: []uint64{0, tIovs, 2, tRes}},
	{name: "fd_write", params: []uint64{3, tIovs, 2, tRes}},
	{name: "fd_write", params: []uint64{1, tMemSize - 4, 1, tRes}},
	{name: "fd_read", params: []uint64{0, tIovs, 1, tRes}, setup: wasiIovs([2]uint32{tBuf + 512, 16})},
	{name: "fd_read", params: []uint64{1, tIovs, 1, tRes}},
	{name: "fd_read", params: []uint64{3, tIovs, 1, tRes}},
	{name: "fd_read", params: []uint64{0, tIovs, 1, tMemSize - 1}},
	{name: "fd_fdstat_get", params: []uint64{3, tRes}},
	{name: "fd_fdstat_get", params: []uint64{1, tMemSize - 8}},
	{name: "fd_filestat_get", params: []uint64{3, tRes}},
	{name: "fd_filestat_get", params: []uint64{1, tMemSize - 8}},
	{name: "fd_fdstat_set_flags", params: []uint64{1, 0}},
	{name: "fd_fdstat_set_flags", params: []uint64{1, 1}},
	{name: "fd_fdstat_set_flags", params: []uint64{1, wasiFdflagNonblock}},
	{name: "fd_fdstat_set_flags", params: []uint64{1, wasiFdflagSync}},
	{name: "fd_fdstat_set_flags", params: []uint64{3, 0}},
	{name: "fd_fdstat_set_flags", params: []uint64{3, wasiFdflagDsync}},
	{name: "fd_fdstat_set_rights", params: []uint64{1, 0, 0}},
	{name: "fd_fdstat_set_rights", params: []uint64{9, 0, 0}},
	{name: "fd_advise", params: []uint64{1, 0, 0, 0}},
	{name: "fd_advise", params: []uint64{1, 0, 0, 6}},
	{name: "fd_advise", params: []uint64{3, 0, 0, 0}},
	{name: "fd_allocate", params: []uint64{1, 0, 0}},
	{name: "fd_allocate", params: []uint64{1, 0, 10}},
	{name: "fd_allocate", params: []uint64{1, 1 << 63, 0}},
	{name: "fd_allocate", params: []uint64{3, 0, 0}},
	{name: "fd_datasync", params: []uint64{1}},
	{name: "fd_datasync", params: []uint64{3}},
	{name: "fd_sync", params: []uint64{2}},
	{name: "fd_sync", params: []uint64{3}},
	{name: "fd_filestat_set_size", params: []uint64{1, 0}},
	{name: "fd_filestat_set_size", params: []uint64{3, 0}},
	{name: "fd_filestat_set_times", params: []uint64{3, 0, 0, 0}},
	{name: "fd_readdir", params: []uint64{1, tBuf, 64, 0, tRes}},
	{name: "fd_readdir", params: []uint64{1, tBuf, 8, 0, tRes}},
	{name: "fd_readdir", params: []uint64{3, tBuf, 64, 0, tRes}},
	{name: "fd_renumber", params: []uint64{1, 5}},
	{name: "fd_renumber", params: []uint64{3, 5}},
	{name: "fd_renumber", params: []uint64{1, math.MaxUint32}},
	{name: "fd_prestat_get", params: []uint64{3, tRes}},
	{name: "fd_prestat_get", params: []uint64{4, tRes}},
	{name: "fd_prestat_dir_name", params: []uint64{3, tBuf, 8}},
	{name: "fd_seek", params: []uint64{3, 0, 0, tRes}},
	{name: "fd_tell", params: []uint64{3, tRes}},
	{name: "fd_pread", params: []uint64{3, tIovs, 1, 0, tRes}},
	{name: "fd_pwrite", params: []uint64{3, tIovs, 1, 0, tRes}},
	{name: "path_create_directory", params: []uint64{1, tPath, 5}},
	{name: "path_create_directory", params: []uint64{3, tPath, 5}},
	{name: "path_create_directory", params: []uint64{1, tMemSize - 2, 5}},
	{name: "path_filestat_get", params: []uint64{1, 0, tPath, 5, tRes}},
	{name: "path_filestat_get", params: []uint64{3, 0, tPath, 5, tRes}},
	{name: "path_filestat_set_times", params: []uint64{1, 0, tPath, 5, 0, 0, 0}},
	{name: "path_filestat_set_times", params: []uint64{1, 0, tPath, 5, 0, 0, wasiFstAtim | wasiFstAtimNow}},
	{name: "path_link", params: []uint64{1, 0, tPath, 5, 1, tPath, 5}},
	{name: "path_link", params: []uint64{3, 0, tPath, 5, 1, tPath, 5}},
	{name: "path_open", params: []uint64{1, 0, tPath, 5, 0, 0, 0, 0, tRes}},
	{name: "path_open", params: []uint64{3, 0, tPath, 5, 0, 0, 0, 0, tRes}},
	{name: "path_readlink", params: []uint64{1, tPath, 5, tBuf, 32, tRes}},
	{name: "path_readlink", params: []uint64{1, tPath, 0, tBuf, 32, tRes}},
	{name: "path_remove_directory", params: []uint64{1, tPath, 5}},
	{name: "path_rename", params: []uint64{1, tPath, 5, 1, tPath, 5}},
	{name: "path_rename", params: []uint64{3, tPath, 5, 1, tPath, 5}},
	{name: "path_symlink", params: []uint64{tPath, 5, 1, tPath, 5}},
	{name: "path_symlink", params: []uint64{tPath, 5, 3, tPath, 5}},
	{name: "path_unlink_file", params: []uint64{1, tPath, 5}},
	{name: "path_unlink_file", params: []uint64{4, tPath, 5}},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{userdata: 7, typ: wasiEventClock, timeout: uint64(time.Hour)})},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{userdata: 8, typ: wasiEventFdRead, fd: 0})},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 2, tRes}, setup: wasiSubs(testSubscription{userdata: 9, typ: wasiEventFdRead, fd: 9}, testSubscription{userdata: 10, typ: wasiEventFdWrite, fd: 9})},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 0, tRes}},
	{name: "poll_oneoff", params: []uint64{tSubs, tMemSize - 16, 1, tRes}},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{typ: wasiEventClock, flags: 1}), errnoOnly: true},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{typ: wasiEventClock, flags: 2}), errnoOnly: true},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{typ: 3}), errnoOnly: true},
	{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{typ: wasiEventFdRead, fd: math.MaxUint32}), errnoOnly: true},
	{name: "sched_yield"},
	{name: "proc_raise", params: []uint64{9}},
	{name: "sock_accept", params: []uint64{1, 0, tRes}},
	{name: "sock_accept", params: []uint64{3, 0, tRes}},
	{name: "sock_recv", params: []uint64{1, tIovs, 1, 0, tRes, tRes + 8}},
	{name: "sock_send", params: []uint64{1, tIovs, 1, 0, tRes}},
	{name: "sock_send", params: []uint64{1, tIovs, 1, 1, tRes}},
	{name: "sock_shutdown", params: []uint64{1, 3}},
	{name: "fd_close", params: []uint64{2}},
	{name: "fd_write", params: []uint64{2, tIovs, 1, tRes}, setup: wasiIovs([2]uint32{tBuf, 7})},
	{name: "fd_fdstat_get", params: []uint64{2, tRes}},
	{name: "fd_close", params: []uint64{2}},
	{name: "fd_close", params: []uint64{3}},
	{name: "fd_write", params: []uint64{1, tIovs, 1, tRes}},
	{name: "random_get", params: []uint64{tBuf + 500, 7}},
	{name: "clock_time_get", params: []uint64{1, 0, tRes}},
}

// TestWASISameAsWazero makes the same calls to wazero's WASI and to ours,
// without capabilities and with stdio and env, and compares what each
// returns, writes to memory and writes out.
func TestWASISameAsWazero(t *testing.T) {
	for _, caps := range []map[string]bool{nil, {"stdio": true, "env": true}} {
		theirs, ours := newWASIShim(t, false, caps), newWASIShim(t, true, caps)
		for _, s := range []*wasiShim{theirs, ours} {
			s.mem.Write(tBuf, []byte("hello, world\n"))
			s.mem.Write(tPath, []byte(tPathName))
		}
		for i, c := range wasiSameSteps {
			for _, s := range []*wasiShim{theirs, ours} {
				if c.setup != nil {
					c.setup(s.mem)
				}
			}
			tn, on := theirs.out.Len(), ours.out.Len()
			want, err1 := theirs.call(c.name, c.params...)
			got, err2 := ours.call(c.name, c.params...)
			if err1 != nil || err2 != nil {
				t.Fatalf("%v: step %d, %s%#x: wazero's failed with %v, ours with %v", caps, i, c.name, c.params, err1, err2)
			}
			if got != want {
				t.Errorf("%v: step %d, %s%#x: errno %d, wazero's %d", caps, i, c.name, c.params, got, want)
			}
			if !c.errnoOnly && !bytes.Equal(theirs.bytes(), ours.bytes()) {
				at := 0
				for j := range theirs.bytes() {
					if theirs.bytes()[j] != ours.bytes()[j] {
						at = j
						break
					}
				}
				t.Errorf("%v: step %d, %s%#x: memory differs from wazero's at %#x", caps, i, c.name, c.params, at)
			}
			if c.errnoOnly {
				// Let the next steps start from the same memory.
				copy(ours.bytes(), theirs.bytes())
			}
			if to, oo := theirs.out.String()[tn:], ours.out.String()[on:]; to != oo {
				t.Errorf("%v: step %d, %s%#x: wrote %q, wazero's %q", caps, i, c.name, c.params, oo, to)
			}
		}
		if caps["stdio"] && theirs.out.String() != "hello, world\nhello, world\nhello, " {
			t.Errorf("%v: stdout and stderr: %q", caps, theirs.out.String())
		}
	}
}

// TestWASIDifferentFromWazero pins where this WASI answers otherwise
// than wazero v1.12's, as wasi.go says and why: should wazero change,
// this says where to look again.
func TestWASIDifferentFromWazero(t *testing.T) {
	const trap = -1
	for _, c := range []struct {
		what         string
		prior        []wasiStep // calls before, answered the same
		step         wasiStep
		theirs, ours int
		check        func(t *testing.T, theirs, ours *wasiShim)
	}{
		{
			what: "stdio is a block device to wazero (its stdio's mode lacks ModeCharDevice), one that can seek",
			step: wasiStep{name: "fd_fdstat_get", params: []uint64{1, tRes}},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				tb, ob := theirs.bytes(), ours.bytes()
				if tb[tRes] != 1 || ob[tRes] != wasiFiletypeCharacterDevice {
					t.Errorf("filetypes %d and %d", tb[tRes], ob[tRes])
				}
				if r := binary.LittleEndian.Uint64(tb[tRes+8:]); r != wasiStdioRights|1<<2|1<<5 {
					t.Errorf("wazero's rights %#x", r)
				}
			},
		},
		{
			what: "fd_filestat_get's filetype likewise",
			step: wasiStep{name: "fd_filestat_get", params: []uint64{1, tRes}},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if theirs.bytes()[tRes+16] != 1 || ours.bytes()[tRes+16] != wasiFiletypeCharacterDevice {
					t.Errorf("filetypes %d and %d", theirs.bytes()[tRes+16], ours.bytes()[tRes+16])
				}
			},
		},
		{what: "seeking stdio is ENOSYS to wazero, ESPIPE as on a pipe", step: wasiStep{name: "fd_seek", params: []uint64{1, 0, 0, tRes}}, theirs: int(errnoNosys), ours: int(errnoSpipe)},
		{what: "fd_tell likewise", step: wasiStep{name: "fd_tell", params: []uint64{1, tRes}}, theirs: int(errnoNosys), ours: int(errnoSpipe)},
		{what: "pread on stdio is EBADF to wazero", step: wasiStep{name: "fd_pread", params: []uint64{0, tIovs, 1, 0, tRes}, setup: wasiIovs([2]uint32{tBuf, 8})}, theirs: int(errnoBadf), ours: int(errnoSpipe)},
		{what: "pwrite likewise", step: wasiStep{name: "fd_pwrite", params: []uint64{1, tIovs, 1, 0, tRes}, setup: wasiIovs([2]uint32{tBuf, 8})}, theirs: int(errnoBadf), ours: int(errnoSpipe)},
		{what: "wazero says stdin is a preopened directory with an empty name", step: wasiStep{name: "fd_prestat_get", params: []uint64{0, tRes}}, theirs: 0, ours: int(errnoBadf)},
		{what: "and gives its name", step: wasiStep{name: "fd_prestat_dir_name", params: []uint64{0, tBuf, 0}}, theirs: 0, ours: int(errnoBadf)},
		{what: "setting stdio's times traps in wazero (a nil FS)", step: wasiStep{name: "fd_filestat_set_times", params: []uint64{1, 0, 0, 0}}, theirs: trap, ours: int(errnoNosys)},
		{what: "reading stdout into no buffers works in wazero", step: wasiStep{name: "fd_read", params: []uint64{1, tIovs, 0, tRes}}, theirs: 0, ours: int(errnoBadf)},
		{what: "writing stdin from no buffers works in wazero", step: wasiStep{name: "fd_write", params: []uint64{0, tIovs, 0, tRes}}, theirs: 0, ours: int(errnoBadf)},
		{
			what:   "wazero writes the iovecs before one out of memory",
			step:   wasiStep{name: "fd_write", params: []uint64{1, tIovs, 2, tRes}, setup: wasiIovs([2]uint32{tBuf, 5}, [2]uint32{tMemSize - 2, 5})},
			theirs: int(errnoFault), ours: int(errnoFault),
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if theirs.out.String() != "hello" || ours.out.Len() != 0 {
					t.Errorf("wrote %q and %q", theirs.out.String(), ours.out.String())
				}
			},
		},
		{
			what:   "wazero writes out before it finds the result pointer out of memory",
			step:   wasiStep{name: "fd_write", params: []uint64{1, tIovs, 1, tMemSize}, setup: wasiIovs([2]uint32{tBuf, 5})},
			theirs: int(errnoFault), ours: int(errnoFault),
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if theirs.out.String() != "hello" || ours.out.Len() != 0 {
					t.Errorf("wrote %q and %q", theirs.out.String(), ours.out.String())
				}
			},
		},
		{what: "wazero checks no iovec after the first it reads into", step: wasiStep{name: "fd_read", params: []uint64{0, tIovs, 2, tRes}, setup: wasiIovs([2]uint32{tBuf, 5}, [2]uint32{tMemSize - 2, 5})}, theirs: 0, ours: int(errnoFault)},
		{what: "wazero checks no result pointer of sock_accept", step: wasiStep{name: "sock_accept", params: []uint64{1, 0, tMemSize}}, theirs: int(errnoBadf), ours: int(errnoFault)},
		{
			what:  "wazero's fake clock advances on a reading it cannot write",
			prior: []wasiStep{{name: "clock_time_get", params: []uint64{0, 0, tMemSize - 4}}},
			step:  wasiStep{name: "clock_time_get", params: []uint64{0, 0, tRes}},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				tv, _ := theirs.mem.ReadUint64Le(tRes)
				ov, _ := ours.mem.ReadUint64Le(tRes)
				if tv != uint64(wasiFakeEpoch+wasiFakeTick) || ov != uint64(wasiFakeEpoch) {
					t.Errorf("readings %d and %d", tv, ov)
				}
			},
		},
		{
			what: "writing stdout is ENOTSUP to wazero's poll_oneoff",
			step: wasiStep{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 1, tRes}, setup: wasiSubs(testSubscription{userdata: 1, typ: wasiEventFdWrite, fd: 1})},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if te, oe := readTestEvents(theirs.mem, 1), readTestEvents(ours.mem, 1); te[0].errno != uint16(errnoNotsup) || oe[0].errno != 0 {
					t.Errorf("events %v and %v", te, oe)
				}
			},
		},
		{
			what: "wazero reports every clock, not only the nearest",
			step: wasiStep{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 2, tRes}, setup: wasiSubs(testSubscription{userdata: 1, typ: wasiEventClock, timeout: 1}, testSubscription{userdata: 2, typ: wasiEventClock, timeout: uint64(time.Hour)})},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if tn, on := memU32(theirs.mem, tRes), memU32(ours.mem, tRes); tn != 2 || on != 1 {
					t.Errorf("%d and %d events", tn, on)
				}
			},
		},
		{
			what: "and a clock with a ready fd",
			step: wasiStep{name: "poll_oneoff", params: []uint64{tSubs, tEvents, 2, tRes}, setup: wasiSubs(testSubscription{userdata: 1, typ: wasiEventClock, timeout: uint64(time.Hour)}, testSubscription{userdata: 2, typ: wasiEventFdRead, fd: 0})},
			check: func(t *testing.T, theirs, ours *wasiShim) {
				if tn, on := memU32(theirs.mem, tRes), memU32(ours.mem, tRes); tn != 2 || on != 1 || readTestEvents(ours.mem, 1)[0].userdata != 2 {
					t.Errorf("%d and %d events", tn, on)
				}
			},
		},
	} {
		theirs, ours := newWASIShim(t, false, map[string]bool{"stdio": true}), newWASIShim(t, true, map[string]bool{"stdio": true})
		for _, s := range []*wasiShim{theirs, ours} {
			s.mem.Write(tBuf, []byte("hello, world\n"))
			for _, p := range append(c.prior, c.step) {
				if p.setup != nil {
					p.setup(s.mem)
				}
			}
		}
		for _, p := range c.prior {
			theirs.call(p.name, p.params...)
			ours.call(p.name, p.params...)
		}
		answer := func(s *wasiShim) int {
			e, err := s.call(c.step.name, c.step.params...)
			if err != nil {
				return trap
			}
			return int(e)
		}
		if te, oe := answer(theirs), answer(ours); te != c.theirs || oe != c.ours {
			t.Errorf("%s: %s%#x: wazero's errno %d, ours %d; want %d and %d", c.what, c.step.name, c.step.params, te, oe, c.theirs, c.ours)
		}
		if c.check != nil {
			t.Run(c.what, func(t *testing.T) { c.check(t, theirs, ours) })
		}
	}
}

// TestWASIProcExitInWazero checks that proc_exit, as a wazero host
// function, ends the call with an exitError the engine can find.
func TestWASIProcExitInWazero(t *testing.T) {
	s := newWASIShim(t, true, nil)
	_, err := s.call("proc_exit", 7)
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != 7 {
		t.Fatalf("proc_exit(7) ended the call with %v, want an exitError with code 7", err)
	}
}

// FuzzWASI calls every WASI function with arguments and memory the
// fuzzer chooses, as a module could: whatever they are, a function
// returns an errno WASI defines (0–76) or, for proc_exit, ends the call
// with an *exitError; nothing else panics, and the memory keeps its
// size. Sleeps end at once (the call's end has come).
func FuzzWASI(f *testing.F) {
	f.Add(uint8(0), uint8(0xff), uint64(16), uint64(64), uint64(0), uint64(0), []byte("seed"))
	f.Add(uint8(30), uint8(0), uint64(0x10), uint64(1), uint64(0x20), uint64(0), bytes.Repeat([]byte{1, 0, 0, 0}, 32))
	f.Add(uint8(28), uint8(0x0f), uint64(0x40), uint64(0x80), uint64(2), uint64(0x100), bytes.Repeat([]byte{0xff}, 300))
	done := make(chan struct{})
	close(done)
	f.Fuzz(func(t *testing.T, fn, caps uint8, a, b, c, d uint64, mem []byte) {
		wf := wasiFunctions[int(fn)%len(wasiFunctions)]
		granted := map[string]bool{}
		for i, name := range []string{"clock", "random", "env", "stdio"} {
			granted[name] = caps&(1<<i) != 0
		}
		m := &wasiTestMemory{b: make([]byte, 1024)}
		copy(m.b, mem)
		w := newWASIEnv(m, granted, io.Discard)
		w.setDone(done)
		stack := make([]uint64, max(len(wf.params), len(wf.results), 1))
		for i := range wf.params {
			v := [...]uint64{a, b, c, d, a ^ d, b ^ c, a + b, c + d, a - d}[i]
			// Pointers and lengths mostly near the memory, sometimes anywhere.
			if wf.params[i] == valI32 && v&0x100000000 == 0 {
				v %= 1100
			}
			stack[i] = v
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(*exitError); !ok || wf.name != "proc_exit" {
						t.Fatalf("%s%v panicked: %v", wf.name, stack[:len(wf.params)], r)
					}
				}
			}()
			wf.fn(w, stack)
		}()
		if len(wf.results) > 0 && wf.name != "proc_exit" && uint32(stack[0]) > 76 {
			t.Errorf("%s returned errno %d, not one of WASI's", wf.name, uint32(stack[0]))
		}
		if len(m.b) != 1024 {
			t.Errorf("%s changed the memory's size to %d", wf.name, len(m.b))
		}
	})
}
