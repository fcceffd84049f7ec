package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestListAndInspectNativeFiles runs list and inspect over the example
// native plugins and a file that is not one.
func TestListAndInspectNativeFiles(t *testing.T) {
	vm, st := cbuild.VecMath(t), cbuild.Stats(t)
	bad := filepath.Join(t.TempDir(), "libbad.so")
	if err := os.WriteFile(bad, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCLI(t, "list", vm, st)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`dynop\.plugin\.stats +1\.0\.0 +available +path +` + regexp.QuoteMeta(st) + `\n +provides dynop\.example\.Stats 1\.0\.0 \{2C7E94B0-5D13-4A86-B74F-0E619A3DC528\}`,
		`\n +needs +dynop\.example\.VecMath from dynop\.plugin\.vecmath, 1\.0\.0 or newer`,
		`dynop\.plugin\.vecmath +1\.0\.0 +available +path +` + regexp.QuoteMeta(vm) + `\n +provides dynop\.example\.VecMath 1\.0\.0`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list output does not match %s:\n%s", want, out)
		}
	}

	code, out, errOut = runCLI(t, "list", "--json", vm, bad)
	if code != 1 || !strings.Contains(errOut, "1 plugin file could not be used") {
		t.Errorf("list with a bad file: exit %d, stderr %q; want 1 and the count", code, errOut)
	}
	var got struct {
		Plugins []struct{ ID, Path, State, Error string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	last := got.Plugins[len(got.Plugins)-1]
	if last.ID != "" || last.Path != bad || last.State != "broken" || !strings.Contains(last.Error, "no plugin format") {
		t.Errorf("the bad file is listed as %+v, want last, broken, with the reason", last)
	}
	found := false
	for _, p := range got.Plugins {
		found = found || p.ID == "dynop.plugin.vecmath" && p.Path == vm
	}
	if !found {
		t.Errorf("the good file is not listed with its path: %+v", got.Plugins)
	}

	code, out, errOut = runCLI(t, "inspect", st)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`(?m)^plugin +dynop\.plugin\.stats$`,
		`(?m)^api +0\.1\.0$`,
		`(?m)^path +` + regexp.QuoteMeta(st) + `$`,
		`(?m)^description +Example C\+\+ plugin`,
		`(?m)^state +available$`,
		`(?m)^provides +dynop\.example\.Stats 1\.0\.0 \{2C7E94B0-5D13-4A86-B74F-0E619A3DC528\}$`,
		`(?m)^needs +dynop\.example\.VecMath 1\.0\.0 or newer \{9A3C5E71-0B2D-4F68-8A1E-3C5D7F90A2B4\} from dynop\.plugin\.vecmath$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("inspect output does not match %s:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "inspect", "--json", "dynop.plugin.text")
	if code != 0 || !strings.Contains(out, `"schema": "dynop.inspect/v1"`) || !strings.Contains(out, `"id": "dynop.plugin.text"`) {
		t.Errorf("inspect of a compiled-in plugin: exit %d\n%s", code, out)
	}
	for _, c := range []struct{ arg, want string }{
		{bad, "no plugin format"},
		{filepath.Join(t.TempDir(), "libnone.so"), "no such file"},
		{"dynop.plugin.txt", `did you mean the plugin "dynop.plugin.text"`},
	} {
		code, _, errOut = runCLI(t, "inspect", c.arg)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("inspect %s: exit %d, stderr %q; want 1 and %q", c.arg, code, errOut, c.want)
		}
	}
}

func TestInspectNativeOperator(t *testing.T) {
	lib := cbuild.Imgproc(t)
	code, out, errOut := runCLI(t, "inspect", "imgproc.Grayscale", lib)
	if code != 0 || !strings.Contains(out, "plugin    dynop.plugin.imgproc") || !strings.Contains(out, "input 0   images uint8|float32, layout HWC, 3 dims") {
		t.Errorf("inspect imgproc.Grayscale: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "inspect", lib)
	if code != 0 || !strings.Contains(out, "operator     imgproc.Grayscale (cpu)") {
		t.Errorf("inspect %s: exit %d\n%s%s", lib, code, out, errOut)
	}
}
