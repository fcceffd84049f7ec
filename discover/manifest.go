package discover

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/dynop/dynop/internal/atomicfile"
	"github.com/dynop/dynop/internal/regfile"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/sign"
)

// ManifestSchema is the schema name of the manifests this package writes
// and reads. A manifest of a later schema of the same name (v2) is
// refused; fields added within v1 are accepted and ignored.
const ManifestSchema = "dynop.manifest/v1"

// manifestSuffix is appended to a plugin's path to name its manifest:
// libx.so has the manifest libx.so.dynop.json next to it.
const manifestSuffix = ".dynop.json"

// maxManifest bounds the manifest and scanner output a host reads.
const maxManifest = 16 << 20

// ManifestPath returns the path of the manifest of the plugin file path.
func ManifestPath(path string) string { return path + manifestSuffix }

// Manifest is what a host knows of a plugin file without running it: the
// plugin's Info, its format and the digest of the binary it describes.
// It is stored as JSON next to the plugin (see [ManifestPath]) and is
// what the scanner child process prints.
//
//	{
//	  "schema": "dynop.manifest/v1",
//	  "format": "native",           // the loader that reads the file
//	  "file": "libx.so",            // the binary's name (informational)
//	  "size": 16384,                // the binary's size in bytes
//	  "sha256": "…",                // the binary's SHA-256, hex
//	  "info": {…},                  // schema.Plugin: id, versions, interfaces, operators, passes, needs, requirements
//	  "loader": {…},                // what the loader needs besides info; optional
//	  "bundled": [                  // files the plugin ships and loads with it; optional
//	    {"path": "lib/libblas.so.3", "size": 1234, "sha256": "…"}
//	  ]
//	}
//
// A plugin's signature covers its manifest, and so the bundled files'
// digests: a host loads a bundled file only if it has the digest listed.
type Manifest struct {
	Schema  string          `json:"schema"`
	Format  string          `json:"format"`
	File    string          `json:"file,omitempty"`
	Size    int64           `json:"size"`
	SHA256  sign.Digest     `json:"sha256"`
	Info    schema.Plugin   `json:"info"`
	Loader  json.RawMessage `json:"loader,omitempty"`
	Bundled []BundledFile   `json:"bundled,omitempty"`
}

// BundledFile is a file a plugin ships beside its binary and loads with
// it, such as a shared library the binary links against and finds
// through RUNPATH $ORIGIN. The loader loads it from a copy whose digest
// it checked (see [File.CheckBundled]), before the plugin itself.
type BundledFile struct {
	// Path is the file's path relative to the plugin file's directory,
	// with slashes; it may lead out of the directory ("../lib/libx.so.1").
	Path string `json:"path"`
	// Size and SHA256 describe the file's bytes.
	Size   int64       `json:"size"`
	SHA256 sign.Digest `json:"sha256"`
}

// checkBundled says what is wrong with a manifest's bundled list: an
// empty or absolute path, a zero digest, a negative size, a file listed
// twice.
func checkBundled(list []BundledFile) error {
	seen := make(map[string]bool, len(list))
	for i, b := range list {
		switch {
		case b.Path == "":
			return fmt.Errorf("bundled[%d]: empty path", i)
		case path.IsAbs(b.Path) || filepath.IsAbs(b.Path):
			return fmt.Errorf("bundled[%d]: path %q is absolute; it must be relative to the plugin file's directory", i, b.Path)
		case b.SHA256.IsZero():
			return fmt.Errorf("bundled[%d] (%s): sha256 is zero", i, b.Path)
		case b.Size < 0:
			return fmt.Errorf("bundled[%d] (%s): negative size %d", i, b.Path, b.Size)
		case seen[path.Clean(b.Path)]:
			return fmt.Errorf("bundled[%d]: %s is listed twice", i, b.Path)
		}
		seen[path.Clean(b.Path)] = true
	}
	return nil
}

// bundledPath returns the absolute path of the file b shipped with the
// plugin file at pluginPath.
func bundledPath(pluginPath string, b BundledFile) string {
	return filepath.Join(filepath.Dir(pluginPath), filepath.FromSlash(b.Path))
}

// hashBundled reads the files rels (relative to the directory of the
// plugin file at pluginPath) and returns their sizes and digests.
func hashBundled(pluginPath string, rels []string) ([]BundledFile, error) {
	out := make([]BundledFile, len(rels))
	for i, rel := range rels {
		out[i].Path = filepath.ToSlash(rel)
		d, size, err := sign.HashFile(bundledPath(pluginPath, out[i]))
		if err != nil {
			return nil, fmt.Errorf("bundled file %s: %w", rel, err)
		}
		out[i].Size, out[i].SHA256 = size, d
	}
	return out, nil
}

// CheckFiles checks that m describes the plugin file at pluginPath as it
// is: its size and SHA-256, and those of every bundled file. Errors wrap
// [ErrManifest] and say which file differs and how; `dynop sign` calls it
// before signing.
func (m *Manifest) CheckFiles(pluginPath string) error {
	d, size, err := sign.HashFile(pluginPath)
	if err != nil {
		return err
	}
	if err := m.matches(d, size); err != nil {
		return err
	}
	return matchBundled(pluginPath, m.Bundled)
}

// matchBundled checks that the files list names (relative to the
// directory of the plugin file at pluginPath) have the sizes and digests
// listed.
func matchBundled(pluginPath string, list []BundledFile) error {
	for _, b := range list {
		d, size, err := sign.HashFile(bundledPath(pluginPath, b))
		if err != nil {
			return fmt.Errorf("%w: bundled file %s: %w", ErrManifest, b.Path, err)
		}
		if d != b.SHA256 || size != b.Size {
			return fmt.Errorf("%w: it does not match bundled file %s: it says sha256 %s (%d bytes), the file has %s (%d bytes); write it again with dynop manifest",
				ErrManifest, b.Path, short(b.SHA256), b.Size, short(d), size)
		}
	}
	return nil
}

// Encode returns the manifest as indented JSON with a final newline. It
// fails, wrapping [schema.ErrPlugin], when the Info holds a value JSON
// cannot carry, as a plugin's loader may give it: an operator argument of
// an undefined type, or a default, allowed value or bound that is not a
// JSON value (NaN, say). The error names the plugin, the operator, the
// argument and the value, as in
//
//	operator "acme.Blur": argument "radius": unknown type 99
func (m *Manifest) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		if where := unencodable(&m.Info); where != nil {
			err = where
		}
		return nil, fmt.Errorf("%w: plugin %q: %w", schema.ErrPlugin, m.Info.ID, err)
	}
	return append(b, '\n'), nil
}

// unencodable returns an error naming the first operator argument of
// info that has no JSON form, or nil if every argument has one.
func unencodable(info *schema.Plugin) error {
	for _, s := range info.Operators {
		for _, a := range s.Args {
			if _, err := a.Type.MarshalText(); err != nil {
				return fmt.Errorf("operator %q: argument %q: unknown type %d", s.Name, a.Name, uint8(a.Type))
			}
			if _, err := json.Marshal(a); err != nil {
				return fmt.Errorf("operator %q: argument %q: %w", s.Name, a.Name, err)
			}
		}
	}
	return nil
}

// parseManifest reads a manifest. Errors wrap [ErrManifest] and say what
// is wrong: not JSON, truncated, another schema, a required field missing
// (schema, format, sha256, size, info.id, info.api_version). Unknown
// fields are accepted, since a newer dynop may write more. Whether the
// info follows the rules of [schema.Plugin] is the host's to check: a
// plugin with invalid info is listed under its ID as broken.
func parseManifest(data []byte) (*Manifest, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrManifest}, args...)...)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		if isTruncated(data, err) {
			return nil, bad("truncated: the JSON ends after %d bytes", len(data))
		}
		return nil, bad("not JSON: %v", err)
	}
	var missing []string
	for _, f := range []string{"schema", "format", "size", "sha256", "info"} {
		if _, ok := raw[f]; !ok {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, bad("missing required field(s) %s", strings.Join(missing, ", "))
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, bad("%v", err)
	}
	if m.Schema != ManifestSchema {
		return nil, bad("schema %q; this host reads %q", m.Schema, ManifestSchema)
	}
	if m.Format == "" {
		return nil, bad("empty format")
	}
	if m.SHA256.IsZero() {
		return nil, bad("sha256 is zero")
	}
	if m.Info.ID == "" {
		return nil, bad("missing required field info.id")
	}
	if m.Info.APIVersion.IsZero() {
		return nil, bad("missing required field info.api_version")
	}
	if err := checkBundled(m.Bundled); err != nil {
		return nil, bad("%v", err)
	}
	return &m, nil
}

// isTruncated reports whether err is JSON ending early.
func isTruncated(data []byte, err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		return len(bytes.TrimSpace(data)) > 0
	}
	return false
}

// ReadManifest reads and parses the manifest file at path. Errors name the
// file.
func ReadManifest(path string) (*Manifest, sign.Digest, error) {
	data, err := readLimited(path, maxManifest)
	if err != nil {
		return nil, sign.Digest{}, err
	}
	m, err := parseManifest(data)
	if err != nil {
		return nil, sign.Digest{}, fmt.Errorf("manifest %s: %w", path, err)
	}
	d, _, _ := sign.HashReader(bytes.NewReader(data))
	return m, d, nil
}

// readLimited reads the file at path, refusing one larger than limit.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := regfile.Open(path) // a named pipe would block the read
	if regfile.Is(err) {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrManifest, err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrManifest, limit)
	}
	return data, nil
}

// WriteManifest writes m to the manifest path of the plugin file plugin,
// atomically: readers see the old manifest or the new one, never part. A
// manifest that cannot be encoded (see [Manifest.Encode]) is an error,
// and no file is written.
func WriteManifest(pluginPath string, m *Manifest) (string, error) {
	path := ManifestPath(pluginPath)
	data, err := m.Encode()
	if err != nil {
		return path, err
	}
	return path, atomicfile.Write(path, data, 0o644)
}
