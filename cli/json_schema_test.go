package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/pipeline"
	"github.com/dynop/dynop/schema"
)

// The JSON the CLI prints is documented field by field in
// docs/cli-json.md, in tables of "| `field` | type | meaning |" under a
// heading per schema ("## dynop.list/v2") and per shared object ("###
// plugin object"). A field of an object nested in the same table is
// written as a path (`requirements.gpu.vendor`, `needs[].plugin`); a field
// whose type links to another table (`[plugin](#plugin-object)`) has its
// fields there; a type "any JSON value" is not looked into. The tests
// below decode what the commands print and fail on any field the document
// does not list, so a field cannot be added without documenting it.

const jsonDoc = "../docs/cli-json.md"

// docRow is one documented field.
type docRow struct {
	ref    string // the anchor of the table its fields are in, or ""
	opaque bool   // any JSON value: not looked into
}

// jsonSchemaDoc is docs/cli-json.md, parsed.
type jsonSchemaDoc struct {
	tables     map[string]map[string]docRow // anchor → field path → row
	checkNames []string                     // the names of doctor's checks
}

// anchor is the anchor GitHub makes of a heading.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

var (
	rowField = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]*) \\|")
	rowRef   = regexp.MustCompile(`\]\(#([a-z0-9_-]+)\)`)
)

func parseJSONDoc(t *testing.T) *jsonSchemaDoc {
	t.Helper()
	data, err := os.ReadFile(jsonDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := &jsonSchemaDoc{tables: map[string]map[string]docRow{}}
	var heading, header string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			heading, header = anchor(strings.TrimSpace(strings.TrimLeft(line, "#"))), ""
			continue
		case !strings.HasPrefix(line, "|"):
			header = ""
			continue
		case header == "":
			header = line
			continue
		}
		m := rowField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		switch header {
		case "| field | type | meaning |":
			if doc.tables[heading] == nil {
				doc.tables[heading] = map[string]docRow{}
			}
			if _, dup := doc.tables[heading][m[1]]; dup {
				t.Errorf("%s: field %s documented twice under #%s", jsonDoc, m[1], heading)
			}
			row := docRow{opaque: strings.Contains(m[2], "any JSON value")}
			if r := rowRef.FindStringSubmatch(m[2]); r != nil {
				row.ref = r[1]
			}
			doc.tables[heading][m[1]] = row
		case "| name | what it checks |":
			doc.checkNames = append(doc.checkNames, m[1])
		}
	}
	for a, rows := range doc.tables {
		for f, row := range rows {
			if row.ref != "" && doc.tables[row.ref] == nil {
				t.Errorf("%s: #%s field %s refers to #%s, which has no table", jsonDoc, a, f, row.ref)
			}
		}
	}
	if len(doc.tables) < 6 || len(doc.checkNames) == 0 {
		t.Fatalf("%s: found %d tables and %d check names; is the format as this test expects?", jsonDoc, len(doc.tables), len(doc.checkNames))
	}
	return doc
}

// undocumented returns the fields of v (decoded JSON) that the table
// named by anchor a, at path prefix, does not document.
func (doc *jsonSchemaDoc) undocumented(v any, a, prefix string) []string {
	var out []string
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	for k, child := range obj {
		path := prefix + k
		row, ok := doc.tables[a][path]
		if !ok {
			out = append(out, "#"+a+" "+path)
			continue
		}
		out = append(out, doc.nested(child, row, a, path)...)
	}
	return out
}

// nested checks the value of a documented field.
func (doc *jsonSchemaDoc) nested(v any, row docRow, a, path string) []string {
	if row.opaque {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		if row.ref != "" {
			return doc.undocumented(v, row.ref, "")
		}
		return doc.undocumented(v, a, path+".")
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, doc.nested(e, row, a, path+"[]")...)
		}
		return out
	}
	return nil
}

// checkDocumented decodes out, the JSON one command printed, and fails the
// test for each field of it that docs/cli-json.md does not document.
func (doc *jsonSchemaDoc) checkDocumented(t *testing.T, what string, out []byte) {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
	schema, _ := v["schema"].(string)
	a := anchor(schema)
	if doc.tables[a] == nil {
		t.Fatalf("%s: schema %q has no section in %s", what, schema, jsonDoc)
	}
	fields := doc.undocumented(v, a, "")
	slices.Sort(fields)
	for _, f := range slices.Compact(fields) {
		t.Errorf("%s (%s): field %s is not documented in %s", what, schema, f, jsonDoc)
	}
}

// fill sets every exported field reachable from v to a value that is not
// empty, so that a field added to a type the CLI prints shows up in its
// JSON even when it is omitted when empty.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		if v.Type() == reflect.TypeFor[error]() {
			v.Set(reflect.ValueOf(errors.New("x")))
		} else if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(1))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// filled returns a T with every field filled in.
func filled[T any]() T {
	var x T
	fill(reflect.ValueOf(&x).Elem())
	return x
}

func TestJSONOutputIsDocumented(t *testing.T) {
	healthyEnv(t)
	doc := parseJSONDoc(t)
	for _, args := range [][]string{
		{"list", "--json"},
		{"list", "--ops", "--json"},
		{"inspect", "--json", "dynop.plugin.image"},
		{"inspect", "--json", "image.Resize"},
		{"list", "--interfaces", "--json"},
		{"inspect", "--json", "dynop.example.Text"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errOut)
		}
		doc.checkDocumented(t, strings.Join(args, " "), []byte(out))
	}

	// Every field of a plugin, an operator entry and a run summary, as
	// the commands print them.
	st := dynop.PluginStatus{Info: filled[schema.Plugin](), Path: "/p/libx.so", State: dynop.StateDuplicate,
		Err: errors.New("x"), DuplicateOf: "/q/libx.so", Signer: "3f2a"}
	st.Info.Version, st.Info.APIVersion = schema.APIVersion, schema.APIVersion
	var b bytes.Buffer
	if err := writeList(&b, []dynop.PluginStatus{st}, true); err != nil {
		t.Fatalf("writeList of every field: %v", err)
	}
	doc.checkDocumented(t, "list --json, every field", b.Bytes())
	if !strings.Contains(b.String(), `"min_driver"`) || !strings.Contains(b.String(), `"deprecated"`) || !strings.Contains(b.String(), `"priority"`) {
		t.Errorf("the filled plugin lacks fields:\n%s", b.String())
	}
	b.Reset()
	opOut := filled[operatorJSON]()
	opOut.Schema = "dynop.operator/v2"
	if err := newJSONEncoder(&b).Encode(opOut); err != nil {
		t.Fatalf("inspect --json OPERATOR of every field: %v", err)
	}
	doc.checkDocumented(t, "inspect --json OPERATOR, every field", b.Bytes())
	b.Reset()
	if err := writeInterfaces(&b, []*ifaceEntry{new(filled[ifaceEntry]())}, true, palette{}); err != nil {
		t.Fatalf("list --interfaces --json of every field: %v", err)
	}
	doc.checkDocumented(t, "list --interfaces --json, every field", b.Bytes())
	b.Reset()
	if err := writeInterface(&b, new(filled[ifaceEntry]()), true, palette{}); err != nil {
		t.Fatalf("inspect --json INTERFACE of every field: %v", err)
	}
	doc.checkDocumented(t, "inspect --json INTERFACE, every field", b.Bytes())
	sum, err := json.Marshal(newRunJSON(new(filled[pipeline.Summary]())))
	if err != nil {
		t.Fatal(err)
	}
	doc.checkDocumented(t, "run --json, every field", sum)

	t.Run("doctor", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "libjunk.so"), nil, 0o644)
		t.Setenv("DYNOP_PLUGIN_PATH", dir+string(os.PathListSeparator)+filepath.Join(dir, "missing"))
		t.Setenv("DYNOP_SANDBOX", "maybe")
		code, out, _ := runCLI(t, "doctor", "--json")
		if code != 1 || !strings.Contains(out, `"fix"`) || !strings.Contains(out, `"details"`) {
			t.Fatalf("doctor --json: exit %d\n%s", code, out)
		}
		doc.checkDocumented(t, "doctor --json", []byte(out))
		_, checks, _ := doctorJSON(t)
		for _, c := range checks {
			if !slices.Contains(doc.checkNames, c.Name) {
				t.Errorf("doctor check %q is not in the table of check names in %s", c.Name, jsonDoc)
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		dir := t.TempDir()
		rings, err := filepath.Abs("../examples/pipelines/images/rings.png")
		if err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(dir, "bad.png")
		os.WriteFile(bad, []byte("not a PNG"), 0o644)
		spec := fmt.Sprintf(`name: schema
batch_size: 1
on_error: skip
inputs:
  photos:
    files: [%q, %q]
operators:
  - name: decode
    op: image.Decode
    inputs: [photos]
    args: {channels: 3}
  - name: invert
    op: image.Invert
    inputs: [decode]
outputs:
  inverted:
    from: invert
    dir: out
    format: png
`, rings, bad)
		file := filepath.Join(dir, "schema.yaml")
		if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCLI(t, "run", "--json", file)
		if code != 0 {
			t.Fatalf("run --json: exit %d: %s", code, errOut)
		}
		for _, want := range []string{`"skipped"`, `"outputs"`, `"nodes"`} {
			if !strings.Contains(out, want) {
				t.Errorf("run --json lacks %s:\n%s", want, out)
			}
		}
		doc.checkDocumented(t, "run --json", []byte(out))
	})

	t.Run("variants", func(t *testing.T) {
		lib := variantsLib(t)
		code, out, errOut := runCLI(t, "inspect", "--json", "test.AddOne", lib)
		if code != 0 || !strings.Contains(out, `"variants"`) {
			t.Fatalf("inspect --json test.AddOne: exit %d: %s\n%s", code, errOut, out)
		}
		doc.checkDocumented(t, "inspect --json test.AddOne", []byte(out))
	})
}

// TestJSONDocCatchesUndocumentedFields makes sure the check above can
// fail: a field the document lacks, at the top, nested in a path or in a
// linked table, is reported.
func TestJSONDocCatchesUndocumentedFields(t *testing.T) {
	doc := parseJSONDoc(t)
	for _, tc := range []struct{ json, want string }{
		{`{"schema": "dynop.list/v2", "extra": 1}`, "#dynoplistv2 extra"},
		{`{"schema": "dynop.list/v2", "plugins": [{"id": "a", "requirements": {"gpu": {"memory": 8}}}]}`, "#plugin-object requirements.gpu.memory"},
		{`{"schema": "dynop.ops/v2", "operators": [{"name": "a", "args": [{"name": "b", "unit": "px"}]}]}`, "#operator-schema-object args[].unit"},
		{`{"schema": "dynop.ops/v2", "operators": [{"schema": {"name": "a"}}]}`, "#operator-schema-object schema"}, // v1's shape
		{`{"schema": "dynop.interfaces/v1", "interfaces": [{"uid": "a", "providers": [{"plugin": "b", "abi": 1}]}]}`, "#interface-entry-object providers[].abi"},
		{`{"schema": "dynop.doctor/v1", "checks": [{"name": "gpu", "severity": 1}]}`, "#dynopdoctorv1 checks[].severity"},
	} {
		var v map[string]any
		if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
			t.Fatal(err)
		}
		got := doc.undocumented(v, anchor(v["schema"].(string)), "")
		if !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: undocumented %q, want [%q]", tc.json, got, tc.want)
		}
	}
	var v map[string]any
	json.Unmarshal([]byte(`{"schema": "dynop.ops/v2", "operators": [{"name": "a", "args": [{"name": "b", "default": {"any": "thing"}}]}]}`), &v)
	if got := doc.undocumented(v, "dynopopsv2", ""); len(got) != 0 {
		t.Errorf("an argument's default, any JSON value, is looked into: %q", got)
	}
}
