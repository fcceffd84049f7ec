package scaffold

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestRustBindingsMatchHeader checks the hand-written bindings of the
// dynop crate (abi/rust/src/lib.rs), which the Rust template depends on,
// against the C header they bind, abi/include/dynop/dynop.h, so that a
// change to one without the other fails here:
//
//   - it parses the header for its structs and their members, its
//     typedefs, its constants (object-like #defines and enum constants)
//     and its function-like macros, and the bindings for their structs,
//     members, type aliases, constants and helpers, and names whatever
//     one has and the other lacks (the header's function-like macros
//     map to Rust helpers through rustHelpers, the one list kept by hand);
//   - from what both have, it writes a C program that prints the size of
//     every struct and typedef, the offset and size of every member and
//     the value of every constant, compiles it against the header and
//     runs it; and a Rust program that prints the same from the bindings;
//   - it compares the two, line by line, and names every difference. The
//     kind of every scalar member and typedef (signed or unsigned integer,
//     float, const or mutable pointer) is compared too, as the header
//     declares it.
func TestRustBindingsMatchHeader(t *testing.T) {
	headerPath := filepath.Join(cbuild.Root(), "abi", "include", "dynop", "dynop.h")
	src, err := os.ReadFile(headerPath)
	if err != nil {
		t.Fatal(err)
	}
	h := parseHeader(string(src))
	if len(h.structs) < 20 || len(h.consts) < 100 || len(h.typedefs) < 8 {
		t.Fatalf("%s: found only %d structs, %d constants and %d typedefs: is the parser in this test still right for it?",
			headerPath, len(h.structs), len(h.consts), len(h.typedefs))
	}
	dir := t.TempDir()
	bindingsPath := filepath.Join(cbuild.Root(), "abi", "rust", "src", "lib.rs")
	rs, err := os.ReadFile(bindingsPath)
	if err != nil {
		t.Fatal(err)
	}

	// Names, and what both have: no compiler needed.
	both, problems := compareDecls(h, parseBindings(string(rs)))
	report := func() {
		if len(problems) > 0 {
			t.Errorf("the Rust bindings (%s) do not match %s: %d problems:\n\t%s",
				bindingsPath, headerPath, len(problems), strings.Join(problems, "\n\t"))
		}
	}
	defer report()

	// Layouts and values of what both have.
	cc := cbuild.Compiler(t, false)
	rustc := os.Getenv("RUSTC")
	if rustc == "" {
		rustc = "rustc"
	}
	if _, err := exec.LookPath(rustc); err != nil {
		t.Skipf("no Rust compiler (%s), which comparing the layout of the Rust template's bindings with dynop.h's needs: %v (install Debian's rustc, or rustup)", rustc, err)
	}
	want := runLayoutProgram(t, "C", dir, "layout_c", writeCProgram(both), cc, "-std=c99", "-I", filepath.Join(cbuild.Root(), "abi", "include"))
	for _, line := range both.kindLines() { // the kinds the header declares
		k, v, _ := strings.Cut(line, " = ")
		want[k] = v
	}
	// The crate as a library, as plugins use it, and the program on top.
	rlib := filepath.Join(dir, "libdynop.rlib")
	if out, err := exec.Command(rustc, "--edition", "2021", "--crate-type", "rlib", "--crate-name", "dynop", "-A", "warnings", "-o", rlib, bindingsPath).CombinedOutput(); err != nil {
		t.Fatalf("compiling the dynop crate %s: %v\n%s", bindingsPath, err, out)
	}
	got := runLayoutProgram(t, "Rust", dir, "layout_rs", writeRustProgram(both), rustc, "--edition", "2021", "-A", "warnings", "--extern", "dynop="+rlib)
	keys := slices.Sorted(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		w, inC := want[k]
		g, inRust := got[k]
		switch {
		case !inC:
			problems = append(problems, fmt.Sprintf("%s: nothing from dynop.h, %s from lib.rs", k, g))
		case !inRust:
			problems = append(problems, fmt.Sprintf("%s: %s in dynop.h, nothing from lib.rs", k, w))
		case w != g:
			problems = append(problems, fmt.Sprintf("%s: %s in dynop.h, %s in lib.rs", k, w, g))
		}
	}
	t.Logf("compared %d sizes, offsets, kinds and values: %d structs, %d typedefs, %d constants", len(want), len(both.structs), len(both.typedefs), len(both.consts))
}

// TestRustBindingsCheckSeesChanges: what TestRustBindingsMatchHeader
// would say if dynop.h or lib.rs gained a declaration the other lacks.
func TestRustBindingsCheckSeesChanges(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(cbuild.Root(), "abi", "include", "dynop", "dynop.h"))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := os.ReadFile(filepath.Join(cbuild.Root(), "abi", "rust", "src", "lib.rs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := compareDecls(parseHeader(string(src)), parseBindings(string(rs))); len(problems) > 0 {
		t.Fatalf("dynop.h and lib.rs differ, before any change:\n\t%s", strings.Join(problems, "\n\t"))
	}

	header := strings.Replace(string(src), "struct dynop_host {", "struct dynop_host {\n    uint32_t since_1_4; /* { } */", 1) + `
/* A new struct, typedef, constants and macro. */
typedef struct dynop_new_thing {
    dynop_header header;
    const char *name, *doc;
} dynop_new_thing;
typedef int32_t dynop_new_code;
#define DYNOP_NEW_LIMIT \
    7
enum { DYNOP_NEW_FLAG = 1u << 3, DYNOP_NEW_OTHER };
#define DYNOP_NEW_MACRO(x) (x)
`
	bindings := strings.Replace(string(rs), "pub struct dynop_need {", "pub struct dynop_need {\n    pub r#extra: u32,", 1) +
		"\npub const DYNOP_RUST_ONLY: u32 = 1;\npub type dynop_rust_only = u8;\n"
	h := parseHeader(header)
	_, problems := compareDecls(h, parseBindings(bindings))
	for _, want := range []string{
		"member dynop_host.since_1_4: in dynop.h, not in lib.rs",
		"struct dynop_new_thing: in dynop.h, not in lib.rs",
		"typedef dynop_new_code: in dynop.h, not in lib.rs (pub type)",
		"constant DYNOP_NEW_LIMIT: in dynop.h, not in lib.rs",
		"constant DYNOP_NEW_FLAG: in dynop.h, not in lib.rs",
		"constant DYNOP_NEW_OTHER: in dynop.h, not in lib.rs",
		"macro DYNOP_NEW_MACRO(...): in dynop.h, and neither bound in lib.rs nor listed in rustHelpers in this test",
		"member dynop_need.extra: in lib.rs, not in dynop.h",
		"constant DYNOP_RUST_ONLY: in lib.rs, not in dynop.h",
		"type dynop_rust_only: in lib.rs, not a typedef of dynop.h",
	} {
		if !slices.Contains(problems, want) {
			t.Errorf("missing problem %q; got\n\t%s", want, strings.Join(problems, "\n\t"))
		}
	}
	if len(problems) != 10 {
		t.Errorf("%d problems, want 10:\n\t%s", len(problems), strings.Join(problems, "\n\t"))
	}

	// The kinds, as the header declares them.
	i := slices.IndexFunc(h.structs, func(s cStruct) bool { return s.name == "dynop_new_thing" })
	if i < 0 {
		t.Fatal("dynop_new_thing not found")
	}
	if got := fmt.Sprint(h.structs[i].members); got != "[{header } {name ptr-const} {doc ptr-const}]" {
		t.Errorf("dynop_new_thing's members: %s", got)
	}
	for typ, want := range map[string]string{
		"const char *": "ptr-const", "void *": "ptr-mut", "int64_t *": "ptr-mut", "const void *": "ptr-const",
		"const dynop_op_schema *const *": "ptr-const", "char *const *": "ptr-const", "char **": "ptr-mut",
		"uint32_t": "uint", "const int32_t": "int", "double": "float", "dynop_result": "int",
		"dynop_cpu_features": "uint", "dynop_version": "", "dynop_function": "",
	} {
		if got := memberKind(typ, false, parseHeader(string(src)).kinds); got != want {
			t.Errorf("memberKind(%q) = %q, want %q", typ, got, want)
		}
	}
}

// compareDecls names what the header h declares and the bindings b lack,
// and the other way round, and returns what both have.
func compareDecls(h *abiDecls, b *rustBindings) (both *abiDecls, problems []string) {
	both = &abiDecls{}
	for _, s := range h.structs {
		members, ok := b.structs[s.name]
		if !ok {
			problems = append(problems, fmt.Sprintf("struct %s: in dynop.h, not in lib.rs", s.name))
			continue
		}
		common := cStruct{name: s.name}
		for _, m := range s.members {
			if slices.Contains(members, m.name) {
				common.members = append(common.members, m)
			} else {
				problems = append(problems, fmt.Sprintf("member %s.%s: in dynop.h, not in lib.rs", s.name, m.name))
			}
		}
		for _, m := range members {
			if !slices.ContainsFunc(s.members, func(c cMember) bool { return c.name == m }) {
				problems = append(problems, fmt.Sprintf("member %s.%s: in lib.rs, not in dynop.h", s.name, m))
			}
		}
		both.structs = append(both.structs, common)
	}
	for name := range b.structs {
		if !slices.ContainsFunc(h.structs, func(s cStruct) bool { return s.name == name }) {
			problems = append(problems, fmt.Sprintf("struct %s: in lib.rs, not in dynop.h", name))
		}
	}
	for _, d := range h.typedefs {
		if b.types[d.name] {
			both.typedefs = append(both.typedefs, d)
		} else {
			problems = append(problems, fmt.Sprintf("typedef %s: in dynop.h, not in lib.rs (pub type)", d.name))
		}
	}
	for name := range b.types {
		if !slices.ContainsFunc(h.typedefs, func(d cTypedef) bool { return d.name == name }) {
			problems = append(problems, fmt.Sprintf("type %s: in lib.rs, not a typedef of dynop.h", name))
		}
	}
	for _, c := range h.consts {
		if b.consts[c.name] {
			both.consts = append(both.consts, c)
		} else {
			problems = append(problems, fmt.Sprintf("constant %s: in dynop.h, not in lib.rs", c.name))
		}
	}
	for name := range b.consts {
		if !slices.ContainsFunc(h.consts, func(c cConst) bool { return c.name == name }) {
			problems = append(problems, fmt.Sprintf("constant %s: in lib.rs, not in dynop.h", name))
		}
	}
	for _, m := range h.macros {
		helper, ok := rustHelpers[m]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("macro %s(...): in dynop.h, and neither bound in lib.rs nor listed in rustHelpers in this test", m))
		case helper != "" && !b.helpers[helper]:
			problems = append(problems, fmt.Sprintf("macro %s(...): its Rust counterpart %s is not in lib.rs", m, helper))
		}
	}
	for m := range rustHelpers {
		if !slices.Contains(h.macros, m) {
			problems = append(problems, fmt.Sprintf("macro %s: listed in rustHelpers in this test, not in dynop.h", m))
		}
	}

	slices.Sort(problems)
	return both, problems
}

// rustHelpers maps each function-like macro of dynop.h to its
// counterpart in lib.rs (a function, or a macro if it ends in "!"), or
// to "" if it has none: a struct literal does what it does.
var rustHelpers = map[string]string{
	"DYNOP_UID":                     "uid",
	"DYNOP_V":                       "version",
	"DYNOP_HEADER":                  "header",
	"DYNOP_HAS_MEMBER":              "dynop_has_member!",
	"DYNOP_VARIANT":                 "variant",
	"DYNOP_INTERFACE_DESC":          "interface_desc",
	"DYNOP_GRAPH_NODE":              "graph_node",
	"DYNOP_NEED":                    "",
	"DYNOP_OPERATOR":                "",
	"DYNOP_OPERATOR_VARIANTS":       "",
	"DYNOP_OPERATOR_FLAGS":          "",
	"DYNOP_OPERATOR_VARIANTS_FLAGS": "",
	"DYNOP_HOST_HAS_SCRATCH":        "host_has_scratch",
	"DYNOP_HOST_HAS_PLUGIN_PATH":    "host_has_plugin_path",
	"DYNOP_PASS_DESC":               "",
	"DYNOP_STATIC_ASSERT":           "", // const _: () = assert!(...)
}

// unboundMacros are the header's object-like macros that are not constants.
var unboundMacros = map[string]bool{
	"DYNOP_DYNOP_H": true, // the include guard
	"DYNOP_EXPORT":  true, // #[no_mangle] pub extern "C"
	"DYNOP_PTR_":    true, // the layout checks' pointer size, #undef'd
}

// abiDecls are the declarations of dynop.h that bindings mirror.
type abiDecls struct {
	structs  []cStruct
	typedefs []cTypedef // not the typedefs of structs
	consts   []cConst
	macros   []string          // function-like
	kinds    map[string]string // of scalar types, the typedefs' included
}

type cStruct struct {
	name    string
	members []cMember
}

// A cMember or cTypedef has a kind if it is a scalar: "int" or "uint"
// (integers), "float", "ptr-const" or "ptr-mut" (pointers, by the
// constness of what they point to); "" for others (arrays, structs,
// function pointers).
type cMember struct{ name, kind string }

type cTypedef struct{ name, kind string }

// A cConst has a kind: "int", "uid", "version", "header" or "string".
type cConst struct{ name, kind string }

var (
	commentRE   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	defineRE    = regexp.MustCompile(`^#\s*define\s+(DYNOP_\w+)(\()?\s*(.*)$`)
	structRE    = regexp.MustCompile(`struct\s+(dynop_\w+)\s*\{([^}]*)\}`)
	enumRE      = regexp.MustCompile(`enum\s*\{([^}]*)\}`)
	fnTypedefRE = regexp.MustCompile(`typedef[^;]*?\(\s*\*\s*(dynop_\w+)\s*\)[^;]*;`)
	typedefRE   = regexp.MustCompile(`typedef\s+(\w+)\s+(dynop_\w+)\s*;`)
	fnMemberRE  = regexp.MustCompile(`\(\s*\*\s*(\w+)\s*\)`)
	declRE      = regexp.MustCompile(`^(.*?)(\w+)\s*(\[[^\]]*\])?$`)
)

// cScalarKinds are the kinds of C's scalar types; parseHeader adds the
// header's typedefs of them.
var cScalarKinds = map[string]string{
	"int8_t": "int", "int16_t": "int", "int32_t": "int", "int64_t": "int", "intptr_t": "int", "int": "int",
	"uint8_t": "uint", "uint16_t": "uint", "uint32_t": "uint", "uint64_t": "uint", "uintptr_t": "uint", "size_t": "uint",
	"float": "float", "double": "float",
}

// parseHeader finds the declarations of dynop.h: it is plain C with one
// declaration per statement, no nested braces in structs, and comments
// and line continuations that it removes first.
func parseHeader(src string) *abiDecls {
	src = strings.ReplaceAll(src, "\\\n", " ")
	src = commentRE.ReplaceAllString(src, " ")
	h := &abiDecls{}
	seen := map[string]bool{}
	var code strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			code.WriteString(line + "\n")
			continue
		}
		m := defineRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil || seen[m[1]] || unboundMacros[m[1]] {
			continue
		}
		seen[m[1]] = true
		if m[2] == "(" {
			h.macros = append(h.macros, m[1])
			continue
		}
		kind := "int"
		switch v := m[3]; {
		case strings.Contains(v, "DYNOP_HEADER("):
			kind = "header"
		case strings.Contains(v, "DYNOP_UID("):
			kind = "uid"
		case strings.Contains(v, "DYNOP_V("):
			kind = "version"
		case strings.HasPrefix(v, `"`):
			kind = "string"
		}
		h.consts = append(h.consts, cConst{m[1], kind})
	}
	text := code.String()

	kinds := maps.Clone(cScalarKinds)
	h.kinds = kinds
	for _, m := range enumRE.FindAllStringSubmatch(text, -1) {
		for _, e := range strings.Split(m[1], ",") {
			name, _, _ := strings.Cut(e, "=")
			if name = strings.TrimSpace(name); strings.HasPrefix(name, "DYNOP_") {
				h.consts = append(h.consts, cConst{name, "int"})
			}
		}
	}
	rest := structRE.ReplaceAllString(text, "struct $1")
	for _, m := range typedefRE.FindAllStringSubmatch(rest, -1) {
		kinds[m[2]] = kinds[m[1]]
		h.typedefs = append(h.typedefs, cTypedef{m[2], kinds[m[1]]})
	}
	for _, m := range fnTypedefRE.FindAllStringSubmatch(rest, -1) {
		h.typedefs = append(h.typedefs, cTypedef{m[1], ""})
	}
	for _, m := range structRE.FindAllStringSubmatch(text, -1) {
		s := cStruct{name: m[1]}
		for _, decl := range strings.Split(m[2], ";") {
			decl = strings.Join(strings.Fields(decl), " ")
			if decl == "" {
				continue
			}
			if fm := fnMemberRE.FindStringSubmatch(decl); fm != nil {
				s.members = append(s.members, cMember{fm[1], ""})
				continue
			}
			// "T *a", or "T a, b": the type of the first, and the names.
			parts := strings.Split(decl, ",")
			first := declRE.FindStringSubmatch(strings.TrimSpace(parts[0]))
			base, _, _ := strings.Cut(first[1], "*")
			for i, part := range parts {
				d := first
				if i > 0 {
					d = declRE.FindStringSubmatch(strings.TrimSpace(part))
					d[1] = base + d[1]
				}
				s.members = append(s.members, cMember{d[2], memberKind(d[1], d[3] != "", kinds)})
			}
		}
		h.structs = append(h.structs, s)
	}
	return h
}

// memberKind is the kind of a member declared with type typ (what
// precedes its name, stars included).
func memberKind(typ string, array bool, kinds map[string]string) string {
	if array {
		return ""
	}
	words := strings.Fields(strings.ReplaceAll(typ, "*", " * "))
	if last := slices.Index(words, "*"); last >= 0 {
		for i, w := range words {
			if w == "*" {
				last = i
			}
		}
		// The pointee is what precedes the last star; it is const if it
		// ends in const, or is a plain type with const in it.
		pointee := words[:last]
		if n := len(pointee); n > 0 && pointee[n-1] == "const" || !slices.Contains(pointee, "*") && slices.Contains(pointee, "const") {
			return "ptr-const"
		}
		return "ptr-mut"
	}
	words = slices.DeleteFunc(words, func(w string) bool { return w == "const" })
	if len(words) != 1 {
		return ""
	}
	return kinds[words[0]]
}

// kindLines are the kinds of the scalar members and typedefs, as
// "kind NAME = KIND".
func (h *abiDecls) kindLines() []string {
	var lines []string
	for _, s := range h.structs {
		for _, m := range s.members {
			if m.kind != "" {
				lines = append(lines, fmt.Sprintf("kind %s.%s = %s", s.name, m.name, m.kind))
			}
		}
	}
	for _, d := range h.typedefs {
		if d.kind != "" {
			lines = append(lines, fmt.Sprintf("kind %s = %s", d.name, d.kind))
		}
	}
	return lines
}

// rustBindings are the names that lib.rs declares.
type rustBindings struct {
	structs map[string][]string // members, in order
	types   map[string]bool
	consts  map[string]bool
	helpers map[string]bool // pub functions; macros as "name!"
}

var (
	rsStructRE = regexp.MustCompile(`^pub struct (dynop_\w+)\s*\{`)
	rsMemberRE = regexp.MustCompile(`^\s+pub (?:r#)?(\w+)\s*:`)
	rsTypeRE   = regexp.MustCompile(`^pub type (dynop_\w+)\b`)
	rsConstRE  = regexp.MustCompile(`^pub const (DYNOP_\w+)\s*:`)
	rsFnRE     = regexp.MustCompile(`^pub (?:const )?(?:unsafe )?fn (\w+)`)
	rsMacroRE  = regexp.MustCompile(`^macro_rules!\s*(\w+)`)
)

// parseBindings finds the declarations of lib.rs, which has each at the
// start of a line, and each struct member on a line of its own.
func parseBindings(src string) *rustBindings {
	b := &rustBindings{structs: map[string][]string{}, types: map[string]bool{}, consts: map[string]bool{}, helpers: map[string]bool{}}
	in := ""
	for _, line := range strings.Split(src, "\n") {
		if in != "" {
			if strings.HasPrefix(line, "}") {
				in = ""
			} else if m := rsMemberRE.FindStringSubmatch(line); m != nil {
				b.structs[in] = append(b.structs[in], m[1])
			}
			continue
		}
		if m := rsStructRE.FindStringSubmatch(line); m != nil {
			in = m[1]
			b.structs[in] = nil
		} else if m := rsTypeRE.FindStringSubmatch(line); m != nil {
			b.types[m[1]] = true
		} else if m := rsConstRE.FindStringSubmatch(line); m != nil {
			b.consts[m[1]] = true
		} else if m := rsFnRE.FindStringSubmatch(line); m != nil {
			b.helpers[m[1]] = true
		} else if m := rsMacroRE.FindStringSubmatch(line); m != nil {
			b.helpers[m[1]+"!"] = true
		}
	}
	return b
}

// writeCProgram returns a C program that prints the layout of h's
// declarations and the values of its constants as dynop.h has them, a
// line "KEY VALUE" each: "sizeof T", "offsetof T.m", "sizeof T.m",
// "const NAME".
func writeCProgram(h *abiDecls) string {
	var b strings.Builder
	b.WriteString(`#include <stdio.h>
#include <stddef.h>
#include <dynop/dynop.h>

static void print_uid(dynop_uid u) {
    int i;
    for (i = 0; i < 16; i++) printf("%02X", u.bytes[i]);
}
static void print_version(dynop_version v) {
    printf("%lu.%lu.%lu", (unsigned long)v.major, (unsigned long)v.minor, (unsigned long)v.patch);
}

int main(void) {
`)
	for _, s := range h.structs {
		fmt.Fprintf(&b, "    printf(\"sizeof %[1]s %%lu\\n\", (unsigned long)sizeof(%[1]s));\n", s.name)
		for _, m := range s.members {
			fmt.Fprintf(&b, "    printf(\"offsetof %[1]s.%[2]s %%lu\\n\", (unsigned long)offsetof(%[1]s, %[2]s));\n", s.name, m.name)
			fmt.Fprintf(&b, "    printf(\"sizeof %[1]s.%[2]s %%lu\\n\", (unsigned long)sizeof(((%[1]s *)0)->%[2]s));\n", s.name, m.name)
		}
	}
	for _, d := range h.typedefs {
		fmt.Fprintf(&b, "    printf(\"sizeof %[1]s %%lu\\n\", (unsigned long)sizeof(%[1]s));\n", d.name)
	}
	for _, c := range h.consts {
		fmt.Fprintf(&b, "    printf(\"const %s \");\n", c.name)
		switch c.kind {
		case "int":
			fmt.Fprintf(&b, "    printf(\"%%lld\\n\", (long long)(%s));\n", c.name)
		case "string":
			fmt.Fprintf(&b, "    printf(\"%%s\\n\", %s);\n", c.name)
		case "uid":
			fmt.Fprintf(&b, "    { dynop_uid v = %s; print_uid(v); printf(\"\\n\"); }\n", c.name)
		case "version":
			fmt.Fprintf(&b, "    { dynop_version v = %s; print_version(v); printf(\"\\n\"); }\n", c.name)
		case "header":
			fmt.Fprintf(&b, "    { dynop_header v = %s; print_uid(v.type); printf(\" \"); print_version(v.version); printf(\" %%lu\\n\", (unsigned long)v.size); }\n", c.name)
		}
	}
	b.WriteString("    return 0;\n}\n")
	return b.String()
}

// writeRustProgram returns a Rust program that prints what
// writeCProgram's does from the bindings of the dynop crate, and the
// kinds of the scalar members and typedefs, "kind T.m KIND" and
// "kind T KIND".
func writeRustProgram(h *abiDecls) string {
	var b strings.Builder
	b.WriteString(`use dynop::*;
use dynop::dynop_offset_of;
use std::mem::{size_of, MaybeUninit};
use std::ptr::addr_of;

trait Kind {
    const KIND: &'static str;
}
macro_rules! kinds {
    ($k:expr, $($t:ty),*) => { $(impl Kind for $t { const KIND: &'static str = $k; })* };
}
kinds!("int", i8, i16, i32, i64, isize);
kinds!("uint", u8, u16, u32, u64, usize);
kinds!("float", f32, f64);
impl<T> Kind for *const T { const KIND: &'static str = "ptr-const"; }
impl<T> Kind for *mut T { const KIND: &'static str = "ptr-mut"; }
fn kind<T: Kind>(_: *const T) -> &'static str { T::KIND }
fn size<T>(_: *const T) -> usize { size_of::<T>() }
fn uid_text(u: &dynop_uid) -> String { u.bytes.iter().map(|b| format!("{:02X}", b)).collect() }
fn version_text(v: &dynop_version) -> String { format!("{}.{}.{}", v.major, v.minor, v.patch) }
fn header_text(h: &dynop_header) -> String { format!("{} {} {}", uid_text(&h.r#type), version_text(&h.version), h.size) }
fn c_text(s: &[u8]) -> String {
    match s.split_last() {
        Some((0, t)) => String::from_utf8_lossy(t).into_owned(),
        _ => "<no NUL at the end>".to_string(),
    }
}

fn main() {
`)
	for _, s := range h.structs {
		fmt.Fprintf(&b, "    println!(\"sizeof %[1]s {}\", size_of::<%[1]s>());\n", s.name)
		fmt.Fprintf(&b, "    let v = MaybeUninit::<%s>::uninit();\n    let p = v.as_ptr();\n", s.name)
		for _, m := range s.members {
			f := rustIdent(m.name)
			fmt.Fprintf(&b, "    println!(\"offsetof %[1]s.%[2]s {}\", dynop_offset_of!(%[1]s, %[3]s));\n", s.name, m.name, f)
			fmt.Fprintf(&b, "    println!(\"sizeof %[1]s.%[2]s {}\", size(unsafe { addr_of!((*p).%[3]s) }));\n", s.name, m.name, f)
			if m.kind != "" {
				fmt.Fprintf(&b, "    println!(\"kind %[1]s.%[2]s {}\", kind(unsafe { addr_of!((*p).%[3]s) }));\n", s.name, m.name, f)
			}
		}
	}
	for _, d := range h.typedefs {
		fmt.Fprintf(&b, "    println!(\"sizeof %[1]s {}\", size_of::<%[1]s>());\n", d.name)
		if d.kind != "" {
			fmt.Fprintf(&b, "    println!(\"kind %[1]s {}\", kind(std::ptr::null::<%[1]s>()));\n", d.name)
		}
	}
	for _, c := range h.consts {
		format := map[string]string{"int": "%s as i64", "string": "c_text(%s)", "uid": "uid_text(&%s)", "version": "version_text(&%s)", "header": "header_text(&%s)"}[c.kind]
		fmt.Fprintf(&b, "    println!(\"const %s {}\", %s);\n", c.name, fmt.Sprintf(format, c.name))
	}
	b.WriteString("}\n")
	return b.String()
}

// rustIdent is name as a Rust identifier: a raw one if it is a keyword.
func rustIdent(name string) string {
	switch name {
	case "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
		"let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait", "true",
		"type", "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
		"final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen":
		return "r#" + name
	}
	return name
}

// runLayoutProgram writes program to dir/name.c or .rs, compiles it with the command
// and args (the output file and source are added), runs it and returns
// its output lines "KEY VALUE" as a map from KEY, whose last word is
// VALUE's first: "offsetof T.m 8" is offsetof T.m → 8.
func runLayoutProgram(t *testing.T, lang, dir, name, program string, command string, args ...string) map[string]string {
	t.Helper()
	ext := map[string]string{"C": ".c", "Rust": ".rs"}[lang]
	srcPath := filepath.Join(dir, name+ext)
	binPath := filepath.Join(dir, name)
	if err := os.WriteFile(srcPath, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(command, append(args, "-o", binPath, srcPath)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compiling the %s program %s: %v\n%s", lang, srcPath, err, out)
	}
	out, err := exec.Command(binPath).Output()
	if err != nil {
		t.Fatalf("running the %s program %s: %v", lang, binPath, err)
	}
	lines := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		what, rest, _ := strings.Cut(line, " ")
		name, value, _ := strings.Cut(rest, " ")
		lines[what+" "+name] = value
	}
	return lines
}

// TestAuthoringRustSection checks the Rust section of docs/authoring.md
// against what dynop new writes: every rust and toml block is in the
// project's src/lib.rs or Cargo.toml, or in the dynop crate, verbatim as
// whole lines (the crate's path in Cargo.toml written as the guide's
// example path), and the sh block has the commands of the project's
// README.
func TestAuthoringRustSection(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(cbuild.Root(), "docs", "authoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(guide), "\n## Plugins in Rust\n")
	if !ok {
		t.Fatal("docs/authoring.md has no section ## Plugins in Rust")
	}
	section, _, _ = strings.Cut(section, "\n## ")

	p, err := Generate(Options{Name: "demo", Lang: "rust", Dir: filepath.Join(t.TempDir(), "demo")})
	if err != nil {
		t.Fatal(err)
	}
	crate, err := rustCrate("")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range []string{filepath.Join(p.Dir, "src", "lib.rs"), filepath.Join(p.Dir, "Cargo.toml"),
		filepath.Join(crate, "src", "lib.rs"), filepath.Join(crate, "src", "guard.rs")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, "\n"+strings.ReplaceAll(string(b), tomlString(filepath.ToSlash(crate)), `"/usr/local/share/dynop/rust"`))
	}
	blocks := regexp.MustCompile("(?s)\n```(rust|toml|sh)\n(.*?)\n```\n").FindAllStringSubmatch(section, -1)
	counts := map[string]int{}
	for _, b := range blocks {
		counts[b[1]]++
		if b[1] == "sh" {
			for _, c := range Commands("rust", "demo") {
				if !strings.Contains(b[2], c.Line) {
					t.Errorf("the sh block lacks the README's command %q:\n%s", c.Line, b[2])
				}
			}
			continue
		}
		if !slices.ContainsFunc(sources, func(src string) bool { return strings.Contains(src, "\n"+b[2]+"\n") }) {
			t.Errorf("this %s block is not in the generated project's src/lib.rs or Cargo.toml, nor in the dynop crate, verbatim:\n%s", b[1], b[2])
		}
	}
	if counts["rust"] < 4 || counts["toml"] != 1 || counts["sh"] != 1 {
		t.Errorf("found %v blocks in the section; is this test's pattern still right for it?", counts)
	}
}

// TestRustCrate runs the dynop crate's own tests (cargo test in
// abi/rust, offline, building outside the source tree): the layout of
// its bindings and its guards.
func TestRustCrate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the dynop crate: not with -short")
	}
	if err := CheckToolchain("rust"); err != nil {
		t.Skip(err)
	}
	cmd := exec.Command("cargo", "test", "--offline", "--quiet")
	cmd.Dir = filepath.Join(cbuild.Root(), "abi", "rust")
	cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+t.TempDir(), "RUST_BACKTRACE=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo test in %s: %v\n%s", cmd.Dir, err, out)
	}
	if n := len(regexp.MustCompile(`(?m)^test result: ok\. [1-9]`).FindAll(out, -1)); n < 2 {
		t.Errorf("cargo test ran %d test programs with tests, want the bindings' and the guards':\n%s", n, out)
	}
}
