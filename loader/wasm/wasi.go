package wasm

import (
	crand "crypto/rand"
	"encoding/binary"
	"io"
	"math"
	mrand "math/rand"
	"os"
	"strings"
	"time"
)

// This file is WASI preview 1 (wasi_snapshot_preview1) as the host gives
// it to every plugin, whichever engine runs the plugin: the engine defines
// wasiFunctions as host functions and hands each call its instance's
// wasiEnv. A plugin has no files, no arguments and no sockets: only
// stdin (always at end of file), stdout and stderr, and what its
// capabilities grant — real clocks ("clock"), real randomness ("random"),
// the host's environment ("env") and its stdout and stderr in the log
// ("stdio"). Without a grant it gets what wazero v1.12's defaults give a
// module, so that a plugin behaves the same on every engine and as it did
// when wazero's own WASI ran it.
//
// Every pointer a function is passed (and every buffer of an iovec array)
// is checked before the function does anything: one outside the memory
// fails the call with EFAULT and leaves the memory, the output and the
// instance's state as they were (wazero checks some pointers only once
// it has written, or not at all). Only proc_exit panics.
//
// Where wazero v1.12 answers otherwise for the stdio fds, it is for a
// reason given at the function: stdio is a character device that cannot
// seek (fd_fdstat_get, fd_filestat_get, fd_seek, fd_tell, fd_pread,
// fd_pwrite), stdin is no preopened directory (fd_prestat_get), stdin
// cannot be written nor stdout read even from no buffers, setting stdio's
// times is ENOSYS (wazero traps), and poll_oneoff reports only the events
// that happened. TestWASIDifferentFromWazero pins each difference.

// wasiModuleName is the import module of WASI preview 1.
const wasiModuleName = "wasi_snapshot_preview1"

// wasiErrno is an error number of WASI preview 1, a function's result.
type wasiErrno uint32

// The error numbers the functions return, as the WASI preview 1 witx
// numbers them (wazero's internal/wasip1/errno.go).
const (
	errnoSuccess wasiErrno = 0
	errnoBadf    wasiErrno = 8
	errnoFault   wasiErrno = 21
	errnoIntr    wasiErrno = 27
	errnoInval   wasiErrno = 28
	errnoIo      wasiErrno = 29
	errnoNosys   wasiErrno = 52
	errnoNotdir  wasiErrno = 54
	errnoNotsup  wasiErrno = 58
	errnoSpipe   wasiErrno = 70
)

// The clocks of clock_res_get and clock_time_get: the only two wazero
// answers for (process and thread CPU time are EINVAL).
const (
	wasiClockRealtime  = 0
	wasiClockMonotonic = 1
)

// The resolutions reported for the clocks, granted or not: wazero's for
// both its fake clocks and the system's (internal/sys/sys.go and
// config.go's WithSysWalltime and WithSysNanotime).
const (
	wasiRealtimeResolution  = uint64(time.Microsecond)
	wasiMonotonicResolution = uint64(time.Nanosecond)
)

// The fake clocks of an instance without "clock" are wazero's
// (internal/platform/time.go): the wall clock reads midnight UTC
// 2022-01-01 first (FakeEpochNanos), the monotonic clock 0, and each
// reading of either advances it by a millisecond, so that a module
// measuring time sees it pass, deterministically.
const (
	wasiFakeEpoch = 1640995200000 * int64(time.Millisecond)
	wasiFakeTick  = int64(time.Millisecond)
)

// wasiFakeSeed seeds the random source of an instance without "random":
// wazero's default source is math/rand seeded with 42
// (internal/platform/crypto.go), which this one repeats byte for byte.
const wasiFakeSeed = 42

// wasiMaxSleep bounds one poll_oneoff sleep with "clock" where the engine
// gave no way to interrupt it (setDone): a Go sleep cannot be stopped by
// the call's deadline, so a module asking for hours would hold its
// goroutine for hours. It is the default call timeout; a module that
// sleeps longer wakes early, its clock event reported.
const wasiMaxSleep = 30 * time.Second

// wasiNanoBase is the origin of the monotonic clock of instances granted
// "clock": readings are nanoseconds since this package was initialized
// (time.Since, monotonic), one clock for every instance. wazero reads
// runtime.nanotime instead, through a linkname; only differences between
// readings mean anything.
var wasiNanoBase = time.Now()

// The file descriptors: stdin, stdout and stderr are the only ones.
const (
	wasiStdin  = 0
	wasiStdout = 1
	wasiStderr = 2
)

// wasiFiletypeCharacterDevice is the filetype of stdin, stdout and
// stderr. wazero v1.12 says a block device (the mode of its stdio files
// lacks fs.ModeCharDevice) that can seek and tell; a character device
// that cannot is what they are, and what wasi-libc's isatty looks for, so
// that a C plugin's stdout is line-buffered, as the log of its lines
// wants, rather than held until 4 KiB fill.
const wasiFiletypeCharacterDevice = 2

// The fdflags of fd_fdstat_set_flags.
const (
	wasiFdflagDsync    = 1 << 1
	wasiFdflagNonblock = 1 << 2
	wasiFdflagRsync    = 1 << 3
	wasiFdflagSync     = 1 << 4
)

// wasiStdioRights are the rights fd_fdstat_get reports for stdin, stdout
// and stderr: the rights wazero gives a file (fileRightsBase in its
// imports/wasi_snapshot_preview1/fs.go) less seeking and telling, as it
// gives a character device. fd_datasync, fd_read, fd_fdstat_set_flags,
// fd_sync, fd_write, fd_advise, fd_allocate, fd_filestat_get,
// fd_filestat_set_size, fd_filestat_set_times and poll_fd_readwrite.
const wasiStdioRights = 1<<0 | 1<<1 | 1<<3 | 1<<4 | 1<<6 | 1<<7 | 1<<8 | 1<<21 | 1<<22 | 1<<23 | 1<<27

// The subscription and event types of poll_oneoff.
const (
	wasiEventClock   = 0
	wasiEventFdRead  = 1
	wasiEventFdWrite = 2
)

// The sizes of the structures poll_oneoff reads and writes.
const (
	wasiSubscriptionSize = 48
	wasiEventSize        = 32
)

// The fst_flags of the *_set_times functions: setting a time both to a
// value and to now is EINVAL.
const (
	wasiFstAtim    = 1 << 0
	wasiFstAtimNow = 1 << 1
	wasiFstMtim    = 1 << 2
	wasiFstMtimNow = 1 << 3
)

// wasiDirentSize is the size of a dirent's header: fd_readdir refuses a
// buffer smaller than one.
const wasiDirentSize = 24

// wasiLE is the byte order of wasm memory.
var wasiLE = binary.LittleEndian

// wasiEnv is the WASI state of one module instance: what it was granted
// and its clocks. Like its instance, it is used by one goroutine at a
// time.
type wasiEnv struct {
	mem memory

	realClock bool      // "clock": the system's clocks and sleeps
	realRand  bool      // "random": crypto/rand
	out       io.Writer // "stdio": stdout and stderr; nil discards them

	// environ is the environment ("env") as environ_get lays it out,
	// "key=value\x00" strings back to back; environAt is where each
	// starts in it.
	environ   []byte
	environAt []uint32

	wall, mono int64           // the fake clocks' next readings
	rand       *mrand.Rand     // the fake random source, made when first read
	closed     uint8           // the stdio fds the module closed, a bit each
	done       <-chan struct{} // the running call's end, for poll_oneoff's sleep
}

// newWASIEnv returns the WASI state of a new instance granted caps
// ("clock", "random", "env", "stdio"); out receives stdout and stderr
// when "stdio" is granted (may be nil otherwise). mem may be nil if the
// engine has the memory only once the module is instantiated: it then
// calls setMemory before the module runs.
func newWASIEnv(mem memory, caps map[string]bool, out io.Writer) *wasiEnv {
	w := &wasiEnv{
		mem:       mem,
		realClock: caps["clock"],
		realRand:  caps["random"],
		wall:      wasiFakeEpoch,
	}
	if caps["stdio"] {
		w.out = out
	}
	if caps["env"] {
		// As wazero's WithEnv would refuse them, an entry with no key
		// and one with a NUL (which would end it early) are left out.
		for _, kv := range os.Environ() {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.IndexByte(kv, 0) >= 0 {
				continue
			}
			w.environAt = append(w.environAt, uint32(len(w.environ)))
			w.environ = append(w.environ, kv...)
			w.environ = append(w.environ, 0)
		}
	}
	return w
}

// setMemory gives the instance's memory, for an engine that has it only
// once the module is instantiated.
func (w *wasiEnv) setMemory(m memory) { w.mem = m }

// setDone gives the end of the call the module is running (its
// context's Done), or nil: a poll_oneoff sleep with "clock" ends when it
// closes, with EINTR, instead of outliving the call's deadline. The
// engine sets it before each call into the module.
func (w *wasiEnv) setDone(done <-chan struct{}) { w.done = done }

// wasiFunction is one import of module wasi_snapshot_preview1.
type wasiFunction struct {
	name            string
	params, results []valType
	// fn runs the function: its params are in stack[0:len(params)], and
	// it writes its results to stack[0:len(results)].
	fn func(w *wasiEnv, stack []uint64)
}

// wasiFunctions are all 46 functions of WASI preview 1, sorted by name,
// with the names and wasm signatures wazero v1.12 defines
// (imports/wasi_snapshot_preview1), so that any module that links with
// wazero's links with these.
var wasiFunctions = []wasiFunction{
	{"args_get", []valType{valI32, valI32}, wasiErrnoResult, wasiArgsGet},
	{"args_sizes_get", []valType{valI32, valI32}, wasiErrnoResult, wasiArgsSizesGet},
	{"clock_res_get", []valType{valI32, valI32}, wasiErrnoResult, wasiClockResGet},
	{"clock_time_get", []valType{valI32, valI64, valI32}, wasiErrnoResult, wasiClockTimeGet},
	{"environ_get", []valType{valI32, valI32}, wasiErrnoResult, wasiEnvironGet},
	{"environ_sizes_get", []valType{valI32, valI32}, wasiErrnoResult, wasiEnvironSizesGet},
	{"fd_advise", []valType{valI32, valI64, valI64, valI32}, wasiErrnoResult, wasiFdAdvise},
	{"fd_allocate", []valType{valI32, valI64, valI64}, wasiErrnoResult, wasiFdAllocate},
	{"fd_close", []valType{valI32}, wasiErrnoResult, wasiFdClose},
	{"fd_datasync", []valType{valI32}, wasiErrnoResult, wasiFdSync},
	{"fd_fdstat_get", []valType{valI32, valI32}, wasiErrnoResult, wasiFdFdstatGet},
	{"fd_fdstat_set_flags", []valType{valI32, valI32}, wasiErrnoResult, wasiFdFdstatSetFlags},
	{"fd_fdstat_set_rights", []valType{valI32, valI64, valI64}, wasiErrnoResult, wasiNosys},
	{"fd_filestat_get", []valType{valI32, valI32}, wasiErrnoResult, wasiFdFilestatGet},
	{"fd_filestat_set_size", []valType{valI32, valI64}, wasiErrnoResult, wasiFdFilestatSetSize},
	{"fd_filestat_set_times", []valType{valI32, valI64, valI64, valI32}, wasiErrnoResult, wasiFdFilestatSetTimes},
	{"fd_pread", []valType{valI32, valI32, valI32, valI64, valI32}, wasiErrnoResult, wasiFdPreadPwrite},
	{"fd_prestat_dir_name", []valType{valI32, valI32, valI32}, wasiErrnoResult, wasiFdPrestatDirName},
	{"fd_prestat_get", []valType{valI32, valI32}, wasiErrnoResult, wasiFdPrestatGet},
	{"fd_pwrite", []valType{valI32, valI32, valI32, valI64, valI32}, wasiErrnoResult, wasiFdPreadPwrite},
	{"fd_read", []valType{valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiFdRead},
	{"fd_readdir", []valType{valI32, valI32, valI32, valI64, valI32}, wasiErrnoResult, wasiFdReaddir},
	{"fd_renumber", []valType{valI32, valI32}, wasiErrnoResult, wasiFdRenumber},
	{"fd_seek", []valType{valI32, valI64, valI32, valI32}, wasiErrnoResult, wasiFdSeek},
	{"fd_sync", []valType{valI32}, wasiErrnoResult, wasiFdSync},
	{"fd_tell", []valType{valI32, valI32}, wasiErrnoResult, wasiFdTell},
	{"fd_write", []valType{valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiFdWrite},
	{"path_create_directory", []valType{valI32, valI32, valI32}, wasiErrnoResult, wasiPathAt},
	{"path_filestat_get", []valType{valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPathFilestatGet},
	{"path_filestat_set_times", []valType{valI32, valI32, valI32, valI32, valI64, valI64, valI32}, wasiErrnoResult, wasiPathFilestatSetTimes},
	{"path_link", []valType{valI32, valI32, valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPathLink},
	{"path_open", []valType{valI32, valI32, valI32, valI32, valI32, valI64, valI64, valI32, valI32}, wasiErrnoResult, wasiPathOpen},
	{"path_readlink", []valType{valI32, valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPathReadlink},
	{"path_remove_directory", []valType{valI32, valI32, valI32}, wasiErrnoResult, wasiPathAt},
	{"path_rename", []valType{valI32, valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPathRename},
	{"path_symlink", []valType{valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPathSymlink},
	{"path_unlink_file", []valType{valI32, valI32, valI32}, wasiErrnoResult, wasiPathAt},
	{"poll_oneoff", []valType{valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiPollOneoff},
	{"proc_exit", []valType{valI32}, nil, wasiProcExit},
	{"proc_raise", []valType{valI32}, wasiErrnoResult, wasiNosys},
	{"random_get", []valType{valI32, valI32}, wasiErrnoResult, wasiRandomGet},
	{"sched_yield", nil, wasiErrnoResult, wasiSchedYield},
	{"sock_accept", []valType{valI32, valI32, valI32}, wasiErrnoResult, wasiSockAccept},
	{"sock_recv", []valType{valI32, valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiSockRecv},
	{"sock_send", []valType{valI32, valI32, valI32, valI32, valI32}, wasiErrnoResult, wasiSockSend},
	{"sock_shutdown", []valType{valI32, valI32}, wasiErrnoResult, wasiSockShutdown},
}

// wasiErrnoResult is the result of every function but proc_exit: an
// errno.
var wasiErrnoResult = []valType{valI32}

// setErrno sets a function's result to e.
func setErrno(s []uint64, e wasiErrno) { s[0] = uint64(e) }

// fits reports whether n bytes at off lie inside the memory.
func (w *wasiEnv) fits(off uint32, n uint64) bool {
	return uint64(off)+n <= uint64(w.mem.Size())
}

// iovecs returns the array of count iovecs (ciovecs) at iovs, having
// checked it and every buffer it points to; false if any lies outside
// the memory, so that nothing is read or written when one does.
func (w *wasiEnv) iovecs(iovs, count uint32) ([]byte, bool) {
	if uint64(count)*8 > math.MaxUint32 {
		return nil, false
	}
	a, ok := w.mem.Read(iovs, count*8)
	if !ok {
		return nil, false
	}
	for i := 0; i < len(a); i += 8 {
		if !w.fits(wasiLE.Uint32(a[i:]), uint64(wasiLE.Uint32(a[i+4:]))) {
			return nil, false
		}
	}
	return a, true
}

// isOpen reports whether fd is stdin, stdout or stderr and the module has
// not closed it: the only fds there are.
func (w *wasiEnv) isOpen(fd uint32) bool {
	return fd <= wasiStderr && w.closed&(1<<fd) == 0
}

// openOrBadf is ESUCCESS if fd is open, else EBADF.
func (w *wasiEnv) openOrBadf(fd uint32) wasiErrno {
	if w.isOpen(fd) {
		return errnoSuccess
	}
	return errnoBadf
}

// dirfd is the error of a path function given fd: there are no
// directories, so ENOTDIR for stdin, stdout and stderr, as wazero answers,
// and EBADF for any other fd.
func (w *wasiEnv) dirfd(fd uint32) wasiErrno {
	if w.isOpen(fd) {
		return errnoNotdir
	}
	return errnoBadf
}

// wasiBadTimes reports fst_flags that set a time both to a value and to now.
func wasiBadTimes(flags uint64) bool {
	return flags&(wasiFstAtim|wasiFstAtimNow) == wasiFstAtim|wasiFstAtimNow ||
		flags&(wasiFstMtim|wasiFstMtimNow) == wasiFstMtim|wasiFstMtimNow
}

// wasiArgsGet is args_get(argv, argv_buf): there are no arguments, so
// nothing is written.
func wasiArgsGet(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[0]), 0) || !w.fits(uint32(s[1]), 0) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, errnoSuccess)
}

// wasiArgsSizesGet is args_sizes_get(result.argc, result.argv_buf_size):
// no arguments, in no bytes.
func wasiArgsSizesGet(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[0]), 4) || !w.fits(uint32(s[1]), 4) {
		setErrno(s, errnoFault)
		return
	}
	w.mem.WriteUint32Le(uint32(s[0]), 0)
	w.mem.WriteUint32Le(uint32(s[1]), 0)
	setErrno(s, errnoSuccess)
}

// wasiEnvironGet is environ_get(environ, environ_buf): the pointers to
// the strings at environ, the NUL-terminated strings back to back at
// environ_buf, as environ_sizes_get counted them.
func wasiEnvironGet(w *wasiEnv, s []uint64) {
	ptrs, buf := uint32(s[0]), uint32(s[1])
	if !w.fits(ptrs, 4*uint64(len(w.environAt))) || !w.fits(buf, uint64(len(w.environ))) {
		setErrno(s, errnoFault)
		return
	}
	for i, at := range w.environAt {
		w.mem.WriteUint32Le(ptrs+4*uint32(i), buf+at)
	}
	w.mem.Write(buf, w.environ)
	setErrno(s, errnoSuccess)
}

// wasiEnvironSizesGet is environ_sizes_get(result.environc,
// result.environ_buf_size): the number of strings and their bytes, NULs
// included.
func wasiEnvironSizesGet(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[0]), 4) || !w.fits(uint32(s[1]), 4) {
		setErrno(s, errnoFault)
		return
	}
	w.mem.WriteUint32Le(uint32(s[0]), uint32(len(w.environAt)))
	w.mem.WriteUint32Le(uint32(s[1]), uint32(len(w.environ)))
	setErrno(s, errnoSuccess)
}

// wasiClockResGet is clock_res_get(id, result.resolution).
func wasiClockResGet(w *wasiEnv, s []uint64) {
	p := uint32(s[1])
	if !w.fits(p, 8) {
		setErrno(s, errnoFault)
		return
	}
	var res uint64
	switch uint32(s[0]) {
	case wasiClockRealtime:
		res = wasiRealtimeResolution
	case wasiClockMonotonic:
		res = wasiMonotonicResolution
	default:
		setErrno(s, errnoInval)
		return
	}
	w.mem.WriteUint64Le(p, res)
	setErrno(s, errnoSuccess)
}

// wasiClockTimeGet is clock_time_get(id, precision, result.timestamp):
// the precision is ignored, as by wazero.
func wasiClockTimeGet(w *wasiEnv, s []uint64) {
	p := uint32(s[2])
	if !w.fits(p, 8) {
		setErrno(s, errnoFault)
		return
	}
	var t int64
	switch uint32(s[0]) {
	case wasiClockRealtime:
		if w.realClock {
			t = time.Now().UnixNano()
		} else {
			t = w.wall
			w.wall += wasiFakeTick
		}
	case wasiClockMonotonic:
		if w.realClock {
			t = int64(time.Since(wasiNanoBase))
		} else {
			t = w.mono
			w.mono += wasiFakeTick
		}
	default:
		setErrno(s, errnoInval)
		return
	}
	w.mem.WriteUint64Le(p, uint64(t))
	setErrno(s, errnoSuccess)
}

// wasiFdAdvise is fd_advise(fd, offset, len, advice): advice on stdio is
// taken and ignored; one that is none of the six is EINVAL.
func wasiFdAdvise(w *wasiEnv, s []uint64) {
	switch {
	case !w.isOpen(uint32(s[0])):
		setErrno(s, errnoBadf)
	case uint8(s[3]) > 5:
		setErrno(s, errnoInval)
	default:
		setErrno(s, errnoSuccess)
	}
}

// wasiFdAllocate is fd_allocate(fd, offset, len): stdio cannot grow, so
// ENOSYS, but for nothing to allocate, as wazero answers.
func wasiFdAllocate(w *wasiEnv, s []uint64) {
	switch tail := int64(s[1] + s[2]); {
	case !w.isOpen(uint32(s[0])):
		setErrno(s, errnoBadf)
	case tail < 0:
		setErrno(s, errnoInval)
	case tail == 0:
		setErrno(s, errnoSuccess)
	default:
		setErrno(s, errnoNosys)
	}
}

// wasiFdClose is fd_close(fd): closing stdin, stdout or stderr works, and
// the fd is then bad for everything.
func wasiFdClose(w *wasiEnv, s []uint64) {
	fd := uint32(s[0])
	if !w.isOpen(fd) {
		setErrno(s, errnoBadf)
		return
	}
	w.closed |= 1 << fd
	setErrno(s, errnoSuccess)
}

// wasiFdSync is fd_sync(fd) and fd_datasync(fd): there is nothing to
// flush.
func wasiFdSync(w *wasiEnv, s []uint64) { setErrno(s, w.openOrBadf(uint32(s[0]))) }

// wasiFdFdstatGet is fd_fdstat_get(fd, result.stat): stdio is a character
// device with no flags and wasiStdioRights, which nothing inherits.
func wasiFdFdstatGet(w *wasiEnv, s []uint64) {
	b, ok := w.mem.Read(uint32(s[1]), 24)
	if !ok {
		setErrno(s, errnoFault)
		return
	}
	if !w.isOpen(uint32(s[0])) {
		setErrno(s, errnoBadf)
		return
	}
	clear(b)
	b[0] = wasiFiletypeCharacterDevice
	wasiLE.PutUint64(b[8:], wasiStdioRights)
	setErrno(s, errnoSuccess)
}

// wasiFdFdstatSetFlags is fd_fdstat_set_flags(fd, flags), as wazero
// answers for stdio: the sync flags are EINVAL (whatever the fd),
// non-blocking is ENOSYS, and append is taken and ignored.
func wasiFdFdstatSetFlags(w *wasiEnv, s []uint64) {
	flags := uint16(s[1])
	switch {
	case flags&(wasiFdflagDsync|wasiFdflagRsync|wasiFdflagSync) != 0:
		setErrno(s, errnoInval)
	case !w.isOpen(uint32(s[0])):
		setErrno(s, errnoBadf)
	case flags&wasiFdflagNonblock != 0:
		setErrno(s, errnoNosys)
	default:
		setErrno(s, errnoSuccess)
	}
}

// wasiNosys is fd_fdstat_set_rights and proc_raise, which neither engine
// implements: ENOSYS.
func wasiNosys(_ *wasiEnv, s []uint64) { setErrno(s, errnoNosys) }

// wasiFdFilestatGet is fd_filestat_get(fd, result.filestat): stdio is an
// empty character device with one link, its times zero.
func wasiFdFilestatGet(w *wasiEnv, s []uint64) {
	b, ok := w.mem.Read(uint32(s[1]), 64)
	if !ok {
		setErrno(s, errnoFault)
		return
	}
	if !w.isOpen(uint32(s[0])) {
		setErrno(s, errnoBadf)
		return
	}
	clear(b)
	b[16] = wasiFiletypeCharacterDevice
	wasiLE.PutUint64(b[24:], 1) // nlink
	setErrno(s, errnoSuccess)
}

// wasiFdFilestatSetSize is fd_filestat_set_size(fd, size): stdio cannot
// be truncated.
func wasiFdFilestatSetSize(w *wasiEnv, s []uint64) {
	if e := w.openOrBadf(uint32(s[0])); e != errnoSuccess {
		setErrno(s, e)
		return
	}
	setErrno(s, errnoNosys)
}

// wasiFdFilestatSetTimes is fd_filestat_set_times(fd, atim, mtim,
// fst_flags): stdio has no times to set. (wazero v1.12 traps here: it
// falls back to the stdio file's file system, which is nil.)
func wasiFdFilestatSetTimes(w *wasiEnv, s []uint64) {
	switch {
	case !w.isOpen(uint32(s[0])):
		setErrno(s, errnoBadf)
	case wasiBadTimes(s[3]):
		setErrno(s, errnoInval)
	default:
		setErrno(s, errnoNosys)
	}
}

// wasiFdPreadPwrite is fd_pread and fd_pwrite(fd, iovs, iovs_len,
// offset, result.n): stdio has no offsets, so ESPIPE, as for a pipe
// (wazero says EBADF).
func wasiFdPreadPwrite(w *wasiEnv, s []uint64) {
	if _, ok := w.iovecs(uint32(s[1]), uint32(s[2])); !ok || !w.fits(uint32(s[4]), 4) {
		setErrno(s, errnoFault)
		return
	}
	if e := w.openOrBadf(uint32(s[0])); e != errnoSuccess {
		setErrno(s, e)
		return
	}
	setErrno(s, errnoSpipe)
}

// wasiFdPrestatDirName is fd_prestat_dir_name(fd, path, path_len): there
// are no preopened directories.
func wasiFdPrestatDirName(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), uint64(uint32(s[2]))) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiFdPrestatGet is fd_prestat_get(fd, result.prestat): there are no
// preopened directories, which EBADF tells wasi-libc and Go, which ask
// from fd 3 up until it. (wazero v1.12 says stdin, stdout and stderr are
// preopened directories with empty names, as its file table marks them
// preopened; no guest asks.)
func wasiFdPrestatGet(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), 8) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiFdRead is fd_read(fd, iovs, iovs_len, result.nread): stdin is
// always at its end; stdout and stderr cannot be read, even into no
// buffers (where wazero reads nothing and succeeds).
func wasiFdRead(w *wasiEnv, s []uint64) {
	p := uint32(s[3])
	if _, ok := w.iovecs(uint32(s[1]), uint32(s[2])); !ok || !w.fits(p, 4) {
		setErrno(s, errnoFault)
		return
	}
	if fd := uint32(s[0]); fd != wasiStdin || !w.isOpen(fd) {
		setErrno(s, errnoBadf)
		return
	}
	w.mem.WriteUint32Le(p, 0)
	setErrno(s, errnoSuccess)
}

// wasiFdReaddir is fd_readdir(fd, buf, buf_len, cookie, result.bufused):
// there are no directories; a buffer too small for one entry is EINVAL,
// as wazero checks it first.
func wasiFdReaddir(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), uint64(uint32(s[2]))) || !w.fits(uint32(s[4]), 4) {
		setErrno(s, errnoFault)
		return
	}
	if uint32(s[2]) < wasiDirentSize {
		setErrno(s, errnoInval)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiFdRenumber is fd_renumber(fd, to): stdin, stdout and stderr cannot
// be renumbered (ENOTSUP, as wazero answers for its preopened fds).
func wasiFdRenumber(w *wasiEnv, s []uint64) {
	if !w.isOpen(uint32(s[0])) || int32(s[1]) < 0 {
		setErrno(s, errnoBadf)
		return
	}
	setErrno(s, errnoNotsup)
}

// wasiFdSeek is fd_seek(fd, offset, whence, result.newoffset): stdio
// cannot seek, so ESPIPE, as for a pipe, which is what C's stdio checks
// for (wazero says ENOSYS).
func wasiFdSeek(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[3]), 8) {
		setErrno(s, errnoFault)
		return
	}
	if e := w.openOrBadf(uint32(s[0])); e != errnoSuccess {
		setErrno(s, e)
		return
	}
	setErrno(s, errnoSpipe)
}

// wasiFdTell is fd_tell(fd, result.offset): as fd_seek.
func wasiFdTell(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), 8) {
		setErrno(s, errnoFault)
		return
	}
	if e := w.openOrBadf(uint32(s[0])); e != errnoSuccess {
		setErrno(s, e)
		return
	}
	setErrno(s, errnoSpipe)
}

// wasiFdWrite is fd_write(fd, iovs, iovs_len, result.nwritten): stdout
// and stderr go to the instance's writer with "stdio", an iovec at a
// time, and are discarded without it; either way every byte counts as
// written. stdin cannot be written, even from no buffers (where wazero
// writes nothing and succeeds).
func wasiFdWrite(w *wasiEnv, s []uint64) {
	p := uint32(s[3])
	a, ok := w.iovecs(uint32(s[1]), uint32(s[2]))
	if !ok || !w.fits(p, 4) {
		setErrno(s, errnoFault)
		return
	}
	if fd := uint32(s[0]); fd != wasiStdout && fd != wasiStderr || !w.isOpen(fd) {
		setErrno(s, errnoBadf)
		return
	}
	var n uint32
	for i := 0; i < len(a); i += 8 {
		off, l := wasiLE.Uint32(a[i:]), wasiLE.Uint32(a[i+4:])
		if w.out == nil {
			n += l
			continue
		}
		b, _ := w.mem.Read(off, l)
		m, err := w.out.Write(b)
		n += uint32(m)
		if err != nil {
			setErrno(s, errnoIo)
			return
		}
	}
	w.mem.WriteUint32Le(p, n)
	setErrno(s, errnoSuccess)
}

// wasiPathAt is path_create_directory, path_remove_directory and
// path_unlink_file(fd, path, path_len): there are no directories.
func wasiPathAt(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), uint64(uint32(s[2]))) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathFilestatGet is path_filestat_get(fd, flags, path, path_len,
// result.filestat).
func wasiPathFilestatGet(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[2]), uint64(uint32(s[3]))) || !w.fits(uint32(s[4]), 64) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathFilestatSetTimes is path_filestat_set_times(fd, flags, path,
// path_len, atim, mtim, fst_flags): contradictory flags are EINVAL
// before the fd is looked at, as wazero checks them.
func wasiPathFilestatSetTimes(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[2]), uint64(uint32(s[3]))) {
		setErrno(s, errnoFault)
		return
	}
	if wasiBadTimes(s[6]) {
		setErrno(s, errnoInval)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathLink is path_link(old_fd, old_flags, old_path, old_path_len,
// new_fd, new_path, new_path_len).
func wasiPathLink(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[2]), uint64(uint32(s[3]))) || !w.fits(uint32(s[5]), uint64(uint32(s[6]))) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathOpen is path_open(fd, dirflags, path, path_len, oflags,
// fs_rights_base, fs_rights_inheriting, fdflags, result.opened_fd).
func wasiPathOpen(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[2]), uint64(uint32(s[3]))) || !w.fits(uint32(s[8]), 4) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathReadlink is path_readlink(fd, path, path_len, buf, buf_len,
// result.bufused): an empty path or buffer is EINVAL before the fd is
// looked at, as wazero checks them.
func wasiPathReadlink(w *wasiEnv, s []uint64) {
	pathLen, bufLen := uint32(s[2]), uint32(s[4])
	if !w.fits(uint32(s[1]), uint64(pathLen)) || !w.fits(uint32(s[3]), uint64(bufLen)) || !w.fits(uint32(s[5]), 4) {
		setErrno(s, errnoFault)
		return
	}
	if pathLen == 0 || bufLen == 0 {
		setErrno(s, errnoInval)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathRename is path_rename(fd, old_path, old_path_len, new_fd,
// new_path, new_path_len).
func wasiPathRename(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[1]), uint64(uint32(s[2]))) || !w.fits(uint32(s[4]), uint64(uint32(s[5]))) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[0])))
}

// wasiPathSymlink is path_symlink(old_path, old_path_len, fd, new_path,
// new_path_len).
func wasiPathSymlink(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[0]), uint64(uint32(s[1]))) || !w.fits(uint32(s[3]), uint64(uint32(s[4]))) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, w.dirfd(uint32(s[2])))
}

// wasiPollOneoff is poll_oneoff(in, out, nsubscriptions, result.nevents).
//
// Reading stdin and writing stdout or stderr never block, so a
// subscription to either is an event at once (reading stdout or stderr,
// writing stdin and a closed or unknown fd are events with EBADF), and
// then no clock waits: only a clock whose timeout is 0 is an event with
// them. With clock subscriptions only, the call sleeps until the nearest
// timeout and reports the clocks that reach it: really with "clock", not
// at all without it, as wazero's fake nanosleep returns at once. Clocks
// are relative: an absolute one is ENOTSUP, as in wazero.
//
// wazero v1.12 reports every subscription as an event, each clock as if
// it had expired and writing stdout as ENOTSUP; and unless one reads
// stdin it sleeps for the nearest clock's timeout first, fd events or
// not — with "clock", 292 years for a lone fd_write subscription, which
// has no clock. This reports what happened, and waits only when nothing
// is ready.
//
// Events are written in the order of the subscriptions, the rest of out
// zeroed. in and out should not overlap (the spec assumes they do not);
// if they do, what is written is unspecified, but stays inside them.
func wasiPollOneoff(w *wasiEnv, s []uint64) {
	in, out, n, np := uint32(s[0]), uint32(s[1]), uint32(s[2]), uint32(s[3])
	if n == 0 {
		setErrno(s, errnoInval)
		return
	}
	if uint64(n)*wasiSubscriptionSize > math.MaxUint32 {
		setErrno(s, errnoFault)
		return
	}
	subs, ok1 := w.mem.Read(in, n*wasiSubscriptionSize)
	events, ok2 := w.mem.Read(out, n*wasiEventSize)
	if !ok1 || !ok2 || !w.fits(np, 4) {
		setErrno(s, errnoFault)
		return
	}
	// First every subscription is checked, and the nearest timeout
	// found, so that a bad one fails the call with nothing written.
	timeout := uint64(math.MaxUint64)
	fds := false
	for i := uint32(0); i < n; i++ {
		sub := subs[i*wasiSubscriptionSize:][:wasiSubscriptionSize]
		switch sub[8] {
		case wasiEventClock:
			switch wasiLE.Uint16(sub[40:]) {
			case 0:
			case 1: // subscription_clock_abstime
				setErrno(s, errnoNotsup)
				return
			default:
				setErrno(s, errnoInval)
				return
			}
			timeout = min(timeout, wasiLE.Uint64(sub[24:]))
		case wasiEventFdRead, wasiEventFdWrite:
			if int32(wasiLE.Uint32(sub[16:])) < 0 {
				setErrno(s, errnoBadf)
				return
			}
			fds = true
		default:
			setErrno(s, errnoInval)
			return
		}
	}
	if fds {
		timeout = 0 // no clock waits for a ready fd
	} else if !w.sleep(timeout) {
		setErrno(s, errnoIntr)
		return
	}
	var nevents uint32
	var ev [wasiEventSize]byte
	for i := uint32(0); i < n; i++ {
		sub := subs[i*wasiSubscriptionSize:][:wasiSubscriptionSize]
		ev = [wasiEventSize]byte{}
		copy(ev[:8], sub[:8]) // userdata
		ev[10] = sub[8]       // type
		switch sub[8] {
		case wasiEventClock:
			if wasiLE.Uint64(sub[24:]) > timeout {
				continue
			}
		case wasiEventFdRead:
			if fd := wasiLE.Uint32(sub[16:]); fd != wasiStdin || !w.isOpen(fd) {
				ev[8] = byte(errnoBadf)
			}
		case wasiEventFdWrite:
			if fd := wasiLE.Uint32(sub[16:]); fd == wasiStdin || !w.isOpen(fd) {
				ev[8] = byte(errnoBadf)
			}
		}
		copy(events[nevents*wasiEventSize:], ev[:])
		nevents++
	}
	clear(events[nevents*wasiEventSize:])
	w.mem.WriteUint32Le(np, nevents)
	setErrno(s, errnoSuccess)
}

// sleep sleeps for ns nanoseconds, a poll_oneoff timeout, with "clock":
// at most wasiMaxSleep, and until the running call ends if the engine
// said when (setDone), returning false then. Without "clock" it returns
// at once, as wazero's fake nanosleep does.
func (w *wasiEnv) sleep(ns uint64) bool {
	if !w.realClock || ns == 0 {
		return true
	}
	d := time.Duration(min(ns, uint64(wasiMaxSleep)))
	if w.done == nil {
		time.Sleep(d)
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.done:
		return false
	}
}

// wasiProcExit is proc_exit(rval): it ends the module's running call,
// which the engine reports as an exit with that code.
func wasiProcExit(_ *wasiEnv, s []uint64) {
	panic(&exitError{code: uint32(s[0])})
}

// wasiRandomGet is random_get(buf, buf_len): crypto/rand with "random";
// without it the instance's own deterministic source, the same bytes as
// wazero's default.
func wasiRandomGet(w *wasiEnv, s []uint64) {
	b, ok := w.mem.Read(uint32(s[0]), uint32(s[1]))
	if !ok {
		setErrno(s, errnoFault)
		return
	}
	if w.realRand {
		crand.Read(b) // never fails (Go 1.24 and later)
	} else {
		if w.rand == nil {
			w.rand = mrand.New(mrand.NewSource(wasiFakeSeed))
		}
		w.rand.Read(b) // fills b; never fails
	}
	setErrno(s, errnoSuccess)
}

// wasiSchedYield is sched_yield(): a no-op, as in wazero, whose default
// yield does nothing either.
func wasiSchedYield(_ *wasiEnv, s []uint64) { setErrno(s, errnoSuccess) }

// wasiSockAccept is sock_accept(fd, flags, result.fd): there are no
// sockets.
func wasiSockAccept(w *wasiEnv, s []uint64) {
	if !w.fits(uint32(s[2]), 4) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiSockRecv is sock_recv(fd, ri_data, ri_data_len, ri_flags,
// result.ro_datalen, result.ro_flags): there are no sockets.
func wasiSockRecv(w *wasiEnv, s []uint64) {
	if _, ok := w.iovecs(uint32(s[1]), uint32(s[2])); !ok || !w.fits(uint32(s[4]), 4) || !w.fits(uint32(s[5]), 2) {
		setErrno(s, errnoFault)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiSockSend is sock_send(fd, si_data, si_data_len, si_flags,
// result.so_datalen): there are no sockets; flags (none are defined) are
// ENOTSUP first, as wazero checks them.
func wasiSockSend(w *wasiEnv, s []uint64) {
	if _, ok := w.iovecs(uint32(s[1]), uint32(s[2])); !ok || !w.fits(uint32(s[4]), 4) {
		setErrno(s, errnoFault)
		return
	}
	if uint32(s[3]) != 0 {
		setErrno(s, errnoNotsup)
		return
	}
	setErrno(s, errnoBadf)
}

// wasiSockShutdown is sock_shutdown(fd, how): there are no sockets.
func wasiSockShutdown(_ *wasiEnv, s []uint64) { setErrno(s, errnoBadf) }
