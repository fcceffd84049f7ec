package nvml

// Names of the package that its external tests use.
var (
	Probe       = probe
	ErrNotFound = errNotFound
)

const (
	DefaultLibrary = defaultLibrary
	LibraryEnv     = libraryEnv
)
