package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/plugin"
	"github.com/dynop/dynop/schema"
)

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one, as Main does, and keeps the CLI's tests away
// from the user's plugins, trust store and caches. With $DYNOP_TEST_MAIN
// set, it is the main of another program instead (see testMainEnv).
func TestMain(m *testing.M) {
	switch os.Getenv(testMainEnv) {
	case "cli.Main":
		os.Exit(Main())
	case "unserving":
		fmt.Println("cli test binary: main ran, not serving")
		os.Exit(0)
	}
	dynop.ServeScanner()
	home, err := os.MkdirTemp("", "dynop-cli-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	os.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	for _, v := range []string{"DYNOP_PLUGIN_PATH", "DYNOP_TRUST_DIR", "DYNOP_SIGNATURE_POLICY"} {
		os.Unsetenv(v)
	}
	code := m.Run()
	os.RemoveAll(home)
	if dynopDir != "" {
		os.RemoveAll(dynopDir)
	}
	os.Exit(code)
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"dynop ", "\nplugin API  " + schema.APIVersion.String() + "\n", runtime.Version()} {
		if !strings.Contains(out, want) {
			t.Errorf("version output %q lacks %q", out, want)
		}
	}
}

func TestListTable(t *testing.T) {
	code, out, errOut := runCLI(t, "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "PLUGIN") {
		t.Errorf("no header: %q", lines[0])
	}
	for _, want := range []string{
		`dynop\.plugin\.greeter +1\.0\.0 +available +provides dynop\.example\.Greeter 1\.0\.0 \{C6A1D7F2-41B3-4E0A-A5C8-7D2E9F1B3C64\}`,
		`\n +needs +dynop\.example\.Text from dynop\.plugin\.text, 1\.1\.0 or newer`,
		`dynop\.plugin\.text +1\.0\.0 +available +provides dynop\.example\.Text 1\.1\.0`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("list output does not match %s:\n%s", want, out)
		}
	}
}

func TestListJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "list", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got struct {
		Schema  string `json:"schema"`
		Plugins []struct {
			ID         string `json:"id"`
			Version    string `json:"version"`
			APIVersion string `json:"api_version"`
			State      string `json:"state"`
			Interfaces []struct {
				UID, Name, Version string
			} `json:"interfaces"`
			Needs []struct {
				Plugin    string `json:"plugin"`
				Interface struct{ Name, Version string }
			} `json:"needs"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if got.Schema != "dynop.list/v2" || len(got.Plugins) != len(plugin.Registered()) {
		t.Fatalf("got %+v", got)
	}
	g := got.Plugins[0]
	if g.ID != "dynop.plugin.greeter" || g.Version != "1.0.0" || g.APIVersion != schema.APIVersion.String() || g.State != "available" ||
		len(g.Interfaces) != 1 || g.Interfaces[0].Name != "dynop.example.Greeter" || g.Interfaces[0].UID != "C6A1D7F2-41B3-4E0A-A5C8-7D2E9F1B3C64" ||
		len(g.Needs) != 1 || g.Needs[0].Plugin != "dynop.plugin.text" || g.Needs[0].Interface.Version != "1.1.0" {
		t.Errorf("greeter entry = %+v", g)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		usage string // what follows the error: the command's usage, or where to read it
	}{
		{nil, "no command given", "Usage: dynop <command>"},
		{[]string{"lsit"}, `unknown command "lsit"`, "Run 'dynop help' for the commands."},
		{[]string{"list", "--yaml"}, "list: flag provided but not defined: --yaml", "usage: dynop list"},
		{[]string{"inspect"}, "inspect takes a plugin file, a plugin ID, an operator name or an interface name or UID", "usage: dynop inspect"},
		{[]string{"version", "now"}, "version takes no arguments", "usage: dynop version"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, tc.usage) {
			t.Errorf("dynop %q: exit %d, stdout %q, stderr %q; want exit 2 and %q with %q", tc.args, code, out, errOut, tc.want, tc.usage)
		}
	}
	if code, out, _ := runCLI(t, "help"); code != 0 || !strings.Contains(out, "Usage: dynop") {
		t.Errorf("help: exit %d, %q", code, out)
	}
}

type brokenPlugin struct{}

func (brokenPlugin) Info() schema.Plugin {
	return schema.Plugin{ID: "acme.plugin.broken", Version: iface.V(2, 0, 0), APIVersion: iface.V(9, 0, 0)}
}
func (brokenPlugin) Start(context.Context, plugin.Registrar) error { return nil }

func TestListShowsWhyAPluginIsUnusable(t *testing.T) {
	ctx := context.Background()
	h, err := dynop.Open(ctx, dynop.Options{Plugins: []plugin.Plugin{brokenPlugin{}}, NoRegistered: true, NoDefaultPaths: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	var table, js bytes.Buffer
	if err := writeList(&table, h.Plugins(), false); err != nil {
		t.Fatal(err)
	}
	want := `acme.plugin.broken +2.0.0 +unsupported +why +unsupported: plugin "acme.plugin.broken" was built for a plugin API this host does not implement`
	if !regexp.MustCompile(want).MatchString(table.String()) {
		t.Errorf("table does not match %q:\n%s", want, table.String())
	}
	if err := writeList(&js, h.Plugins(), true); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Plugins []struct{ ID, State, Error string }
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Plugins) != 1 || got.Plugins[0].State != "unsupported" || !strings.Contains(got.Plugins[0].Error, "requested 9.0.0 or newer, provided "+schema.APIVersion.String()) {
		t.Errorf("JSON = %s", js.String())
	}
}

func TestOperatorsCLI(t *testing.T) {
	code, out, errOut := runCLI(t, "list", "--ops")
	if code != 0 || !strings.Contains(out, "image.Resize") || !strings.Contains(out, "dynop.plugin.image") {
		t.Errorf("list --ops: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "list", "--ops", "--json")
	var ops struct {
		Schema    string
		Operators []struct{ Name, Plugin string }
	}
	if err := json.Unmarshal([]byte(out), &ops); err != nil || code != 0 || ops.Schema != "dynop.ops/v2" || len(ops.Operators) == 0 ||
		ops.Operators[0].Name == "" || ops.Operators[0].Plugin == "" || strings.Contains(out, `"schema": {`) {
		t.Errorf("list --ops --json: exit %d, %v: %+v", code, err, ops)
	}
	code, out, errOut = runCLI(t, "inspect", "image.Resize")
	for _, want := range []string{"operator  image.Resize", "plugin    dynop.plugin.image", "devices   cpu",
		"input 0   images uint8|float32, layout HWC", "arg       width int (required) [range [1, 65536]]"} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect image.Resize: missing %q in\n%s%s", want, out, errOut)
		}
	}
	if code != 0 {
		t.Errorf("inspect image.Resize: exit %d", code)
	}
	code, out, _ = runCLI(t, "inspect", "--json", "image.Resize")
	var doc struct {
		Schema   string
		Operator struct {
			Name string
			Args []struct {
				Name string
				Type string
			}
			Plugin string
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("inspect --json: exit %d, %v\n%s", code, err, out)
	}
	// v2: the operator's schema fields are the operator object's own (v1
	// had them under "schema", which the top level's "schema" made
	// ambiguous).
	if doc.Schema != "dynop.operator/v2" || doc.Operator.Name != "image.Resize" || doc.Operator.Plugin != "dynop.plugin.image" ||
		len(doc.Operator.Args) == 0 || doc.Operator.Args[0].Type != "int" || strings.Contains(out, `"schema": {`) {
		t.Errorf("inspect --json: %+v", doc)
	}
	code, _, errOut = runCLI(t, "inspect", "image.Resise")
	if code != 1 || !strings.Contains(errOut, `(did you mean the operator "image.Resize"?)`) || !strings.Contains(errOut, "tried a plugin file (no such file), a plugin ID, an operator name") {
		t.Errorf("inspect of a near miss: exit %d, %s", code, errOut)
	}
}
