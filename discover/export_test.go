package discover

// For the tests of package discover_test.
var (
	ParseManifestForTest = parseManifest
	UserDirForTest       = userDir
	ExeDirsForTest       = exeDirs
)
