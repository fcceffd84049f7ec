package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/dynop/dynop/internal/srctree"
	"github.com/dynop/dynop/schema"
)

// versionSchema is the schema of dynop version --json.
const versionSchema = "dynop.version/v1"

// buildVersion is what dynop version reports (schema dynop.version/v1).
type buildVersion struct {
	Schema string `json:"schema"`
	// Version is the dynop module's version: a tag such as "v1.2.0", a
	// pseudo-version, "(devel)" for a build in its own source tree, or
	// "unknown" when the binary carries no build information.
	Version string `json:"version"`
	// Program is the main package's path, "" when unknown: another
	// program may embed dynop's CLI (cli.Main).
	Program string `json:"program,omitempty"`
	// VCS is the commit the binary was built from; nil when the build
	// did not record one (go run, go test, -buildvcs=false, no checkout).
	VCS       *vcsInfo `json:"vcs,omitempty"`
	PluginAPI string   `json:"plugin_api"`
	Go        string   `json:"go"`
	OS        string   `json:"os"`
	Arch      string   `json:"arch"`
}

// vcsInfo is the version control state a build recorded (the vcs.*
// settings of its build information).
type vcsInfo struct {
	System   string `json:"system"`
	Revision string `json:"revision"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
}

// readVersion makes the report from the build information bi (nil when
// the binary has none).
func readVersion(bi *debug.BuildInfo) buildVersion {
	v := buildVersion{Schema: versionSchema, Version: "unknown", PluginAPI: schema.APIVersion.String(),
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return v
	}
	v.Program = bi.Path
	if bi.Main.Path == srctree.Module && bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path != srctree.Module {
			continue
		}
		v.Version = d.Version
		if d.Replace != nil {
			v.Version += " => " + d.Replace.Path
			if d.Replace.Version != "" {
				v.Version += " " + d.Replace.Version
			}
		}
	}
	var vcs vcsInfo
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs":
			vcs.System = s.Value
		case "vcs.revision":
			vcs.Revision = s.Value
		case "vcs.time":
			vcs.Time = s.Value
		case "vcs.modified":
			vcs.Modified = s.Value == "true"
		}
	}
	// The build's VCS settings are those of the main module's tree: dynop's
	// revision only when the program is built from dynop's module, not a
	// program that embeds the CLI (its version is then the dependency's).
	if vcs.Revision != "" && bi.Main.Path == srctree.Module {
		v.VCS = &vcs
	}
	return v
}

// writeText prints the report as aligned lines.
func (v buildVersion) writeText(w io.Writer) error {
	rev, when := "unknown (the build recorded none: go run, go test or -buildvcs=false)", "unknown"
	if v.VCS != nil {
		rev = v.VCS.Revision
		if v.VCS.Modified {
			rev += " (modified)"
		}
		if v.VCS.Time != "" {
			when = v.VCS.Time
		}
	}
	_, err := fmt.Fprintf(w, "dynop %s\n%-11s %s\n%-11s %s\n%-11s %s\n%-11s %s %s/%s\n",
		v.Version, "revision", rev, "commit time", when, "plugin API", v.PluginAPI, "go", v.Go, v.OS, v.Arch)
	return err
}

// versionCommand is dynop version [--json].
func versionCommand(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON (schema "+versionSchema+"; see docs/cli-json.md)")
	if err := noArgs("version", fs, args); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	v := readVersion(bi)
	if *asJSON {
		return newJSONEncoder(stdout).Encode(v)
	}
	return v.writeText(stdout)
}
