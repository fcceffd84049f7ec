package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/srctree"
	"github.com/dynop/dynop/schema"
)

func TestReadVersion(t *testing.T) {
	withVCS := &debug.BuildInfo{Path: "github.com/dynop/dynop/cmd/dynop", Main: debug.Module{Path: srctree.Module, Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "e17ff61c0ffee1234567890abcdef1234567890a"},
			{Key: "vcs.time", Value: "2025-06-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	v := readVersion(withVCS)
	if v.Version != "v0.4.0" || v.Program != withVCS.Path || v.VCS == nil || v.VCS.System != "git" ||
		v.VCS.Revision != "e17ff61c0ffee1234567890abcdef1234567890a" || v.VCS.Time != "2025-06-01T10:00:00Z" || !v.VCS.Modified ||
		v.PluginAPI != schema.APIVersion.String() || v.Go != runtime.Version() {
		t.Errorf("readVersion of a git build = %+v (vcs %+v)", v, v.VCS)
	}
	var b bytes.Buffer
	v.writeText(&b)
	for _, want := range []string{"dynop v0.4.0\n", "\nrevision    e17ff61c0ffee1234567890abcdef1234567890a (modified)\n", "\ncommit time 2025-06-01T10:00:00Z\n",
		"\nplugin API  " + schema.APIVersion.String() + "\n", "\ngo          " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version text lacks %q:\n%s", want, b.String())
		}
	}

	// go run and go test record no VCS settings: unknown.
	v = readVersion(&debug.BuildInfo{Path: "command-line-arguments", Main: debug.Module{Path: srctree.Module, Version: "(devel)"}})
	b.Reset()
	v.writeText(&b)
	if v.Version != "(devel)" || v.VCS != nil || !strings.Contains(b.String(), "\nrevision    unknown") || !strings.Contains(b.String(), "\ncommit time unknown\n") {
		t.Errorf("readVersion without VCS settings = %+v:\n%s", v, b.String())
	}
	// A program that embeds the CLI: dynop's version is its dependency's.
	// Its VCS settings are the program's tree, not dynop's: not reported.
	v = readVersion(&debug.BuildInfo{Main: debug.Module{Path: "example.com/acme", Version: "v1.0.0"},
		Deps:     []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.30.0"}, {Path: srctree.Module, Version: "v0.3.1"}},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "acme0000"}}})
	if v.Version != "v0.3.1" || v.VCS != nil {
		t.Errorf("dynop as a dependency: version %q, VCS %+v; want v0.3.1 and no VCS (the program's)", v.Version, v.VCS)
	}
	v = readVersion(&debug.BuildInfo{Main: debug.Module{Path: "example.com/acme"},
		Deps: []*debug.Module{{Path: srctree.Module, Version: "v0.3.1", Replace: &debug.Module{Path: "../dynop"}}}})
	if v.Version != "v0.3.1 => ../dynop" {
		t.Errorf("dynop replaced: version %q", v.Version)
	}
	if v := readVersion(nil); v.Version != "unknown" || v.VCS != nil || v.PluginAPI == "" {
		t.Errorf("no build information: %+v", v)
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "version", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("version --json: exit %d, %s", code, errOut)
	}
	var got buildVersion
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Schema != "dynop.version/v1" || got.Version == "" || got.PluginAPI != schema.APIVersion.String() || got.Go != runtime.Version() || got.OS != runtime.GOOS || got.Arch != runtime.GOARCH {
		t.Errorf("version --json = %+v", got)
	}
	doc := parseJSONDoc(t)
	doc.checkDocumented(t, "version --json", []byte(out))
	// Every field, as a build from a checkout prints them.
	v := filled[buildVersion]()
	v.Schema = versionSchema
	var b bytes.Buffer
	if err := newJSONEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	doc.checkDocumented(t, "version --json, every field", b.Bytes())
	if !strings.Contains(b.String(), `"revision"`) || !strings.Contains(b.String(), `"program"`) {
		t.Errorf("the filled version lacks fields:\n%s", b.String())
	}
}
