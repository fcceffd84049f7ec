package native

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/sign"
)

// sealedCopy copies the file at path into a new memfd, hashing the bytes
// as they are copied, and seals it against every change (write, grow,
// shrink, further seals). What the dynamic linker later maps from the
// memfd are exactly the bytes hashed, whatever happens to the file.
//
// The memfd is named "dynop:" and the path, so /proc/self/maps and
// debuggers show which plugin it holds (as /memfd:dynop:PATH (deleted)).
func sealedCopy(path string) (*os.File, sign.Digest, error) {
	src, err := regfile.Open(path) // a named pipe would block the copy
	if regfile.Is(err) {
		return nil, sign.Digest{}, fmt.Errorf("native: %s: %w: %w", path, dynop.ErrFormat, err)
	}
	if err != nil {
		return nil, sign.Digest{}, fmt.Errorf("native: %w", err)
	}
	defer src.Close()
	name := "dynop:" + path
	if len(name) > 249 { // the kernel's limit
		name = "dynop:…" + path[len(path)-(249-len("dynop:…")):]
	}
	// MFD_EXEC: kernels with vm.memfd_noexec refuse to map a memfd as
	// code without it; older kernels do not know the flag.
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, sign.Digest{}, fmt.Errorf("native: %s: memfd_create: %w", path, err)
	}
	mf := os.NewFile(uintptr(fd), name)
	d, _, err := sign.HashReader(io.TeeReader(src, mf))
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	}
	if err != nil {
		mf.Close()
		return nil, sign.Digest{}, fmt.Errorf("native: %s: copy into a sealed memfd: %w", path, err)
	}
	return mf, d, nil
}

// fdPath is the name the dynamic linker opens f by.
func fdPath(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }
