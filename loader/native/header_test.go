package native_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynop/dynop/dispatch"
	"github.com/dynop/dynop/internal/cbuild"
)

// headerUse includes the headers and expands every macro of dynop.h the
// way a plugin does, in code valid as C and as C++.
const headerUse = `#include <dynop/dynop.h>
#include "vecmath/vecmath.h"
#include "stats/stats.h"

#define MY_UID DYNOP_UID(0x01234567, 0x89AB, 0xCDEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF)
typedef struct my_iface {
    dynop_header header;
    int (*f)(void);
} my_iface;
static int f(void) { return 1; }
static const my_iface table = {DYNOP_HEADER(MY_UID, DYNOP_V(1, 2, 3), my_iface), f};
static const dynop_interface_desc desc = DYNOP_INTERFACE_DESC(MY_UID, DYNOP_V(1, 2, 3), "my.Iface");
static const dynop_interface_desc *const provides[] = {&desc};
static const dynop_interface_desc vm = DYNOP_INTERFACE_DESC(DYNOP_VECMATH_UID, DYNOP_VECMATH_VERSION, DYNOP_VECMATH_NAME);
static const dynop_need need = DYNOP_NEED(DYNOP_VECMATH_PLUGIN, &vm);
static const dynop_need *const needs[] = {&need};
static const dynop_requirements req = {DYNOP_REQUIREMENTS_HEADER, "linux", DYNOP_V(5, 0, 0), "amd64", "avx2",
                                       "nvidia", DYNOP_V(8, 6, 0), DYNOP_V(535, 0, 0), "libm.so.6"};
static const dynop_op_input ins[] = {{DYNOP_OP_INPUT_HEADER, "in", "doc", "uint8,float32", "HWC", 3, NULL}};
static const dynop_op_output outs[] = {{DYNOP_OP_OUTPUT_HEADER, "out", "doc", "HWC", "uint8", NULL, "in", 3, NULL, 0}};
static const dynop_op_arg args[] = {
    {DYNOP_OP_ARG_HEADER, "n", "doc", DYNOP_ARG_INT, DYNOP_ARG_HAS_MIN | DYNOP_ARG_HAS_MAX, 1, 9, "3", "[1, 3]", "old_n"}};
static const dynop_op_schema schema = {DYNOP_OP_SCHEMA_HEADER, "my.Op", "doc", "cpu", 1, 0, ins, 1, outs, 1, args};
static const dynop_op_schema *const schemas[] = {&schema};
static dynop_result op_create(void *u, const dynop_arg *a, uint32_t n, void **inst) {
    (void)u;
    *inst = 0;
    return n == 1 && a[0].type == DYNOP_ARG_INT && *(const int64_t *)a[0].values == 3 ? DYNOP_OK : DYNOP_ERROR;
}
static dynop_result op_setup(void *inst, const dynop_tensor *in, uint32_t nin, dynop_tensor *out, uint32_t nout) {
    (void)inst, (void)nin, (void)nout;
    out->dtype = in->dtype;
    out->ndim = in->ndim < DYNOP_MAX_NDIM ? in->ndim : DYNOP_MAX_NDIM;
    out->shape[0] = in->shape[0];
    return in->device.device_type == DYNOP_DEVICE_CPU && in->dtype.code == DYNOP_DTYPE_UINT ? DYNOP_OK : DYNOP_ERROR_UNSUPPORTED;
}
static dynop_result op_run(void *inst, const dynop_tensor *out, uint32_t nout, const dynop_tensor *in, uint32_t nin) {
    (void)inst, (void)out, (void)nout, (void)in, (void)nin;
    return DYNOP_OK;
}
static const dynop_operator op = DYNOP_OPERATOR("my.Op", "cpu", 0, op_create, op_setup, op_run, 0);
static const dynop_variant runs[] = {DYNOP_VARIANT("avx2", DYNOP_CPU_AVX2 | DYNOP_CPU_FMA, op_run),
                                     DYNOP_VARIANT("neon", DYNOP_CPU_NEON, op_run), DYNOP_VARIANT("scalar", 0, op_run)};
static const dynop_operator op2 = DYNOP_OPERATOR_VARIANTS("my.Op2", "cpu", 0, op_create, op_setup, 0, runs);
static dynop_result pass_run(void *user, const dynop_graph_builder *b) {
    uint32_t i, picked[2] = {0, 0};
    (void)user;
    if (!DYNOP_HAS_MEMBER(dynop_graph_builder, b, group)) return DYNOP_ERROR_VERSION;
    if (b->node != DYNOP_NO_NODE) return b->set_operator(b, b->node, "my.Op", "{\"n\": 3}");
    for (i = 0; i < b->node_count && i < 2; i++) {
        const dynop_graph_node *n = DYNOP_GRAPH_NODE(b, i);
        if (!DYNOP_HAS_MEMBER(dynop_graph_node, n, args_json)) return DYNOP_ERROR_VERSION;
        if (n->input_count > 0 && (n->inputs[0] == DYNOP_NO_NODE || n->input_outputs[0] > 0)) return DYNOP_ERROR;
        if (n->definition == 0 && n->kind[0] != 0 && n->args_json != 0) picked[i] = i;
    }
    return b->group(b, "pair", picked, i);
}
static const dynop_pass_desc populate = DYNOP_PASS_DESC("my.populate", DYNOP_PASS_POPULATE, "my.Kind", 0, "doc");
static const dynop_pass_desc pair = {DYNOP_PASS_DESC_HEADER, "my.pair", DYNOP_PASS_PARTITION, 0, -5, 0};
static const dynop_pass_desc check = DYNOP_PASS_DESC("my.check", DYNOP_PASS_GLOBAL, 0, 0, 0);
static const dynop_pass_desc *const passes[] = {&populate, &pair, &check};
static const dynop_pass pass = {DYNOP_PASS_HEADER, "my.populate", 0, pass_run};
static const dynop_plugin_info info = {DYNOP_PLUGIN_INFO_HEADER, DYNOP_API_VERSION, "my.plugin.x", DYNOP_V(1, 0, 0),
                                       "d", "a", "b", DYNOP_PLUGIN_GLOBAL_SYMBOLS, 1, provides, 1, needs, &req, 1, schemas,
                                       3, passes};
static const dynop_plugin_info *get_info(void) { return &info; }
static dynop_result reg(const dynop_host *host) {
    const void *p = 0;
    dynop_ref ref = 0;
    const dynop_version v = DYNOP_V(1, 0, 0);
    if (!DYNOP_HAS_MEMBER(dynop_host, host, last_error)) return DYNOP_ERROR_VERSION;
    if (DYNOP_HOST_HAS_PLUGIN_PATH(host) && host->plugin_path != NULL && host->plugin_path[0] != '/') return DYNOP_ERROR;
    if (host->acquire(host, DYNOP_VECMATH_PLUGIN, &vm.uid, v, &p, &ref) != DYNOP_OK) {
        host->set_error(host, host->last_error(host));
        return DYNOP_ERROR_NOT_FOUND;
    }
    if (!DYNOP_HAS_MEMBER(dynop_vecmath, (const dynop_vecmath *)p, nop)) return DYNOP_ERROR_VERSION;
    host->log(host, DYNOP_LOG_INFO, "ok");
    if (DYNOP_HAS_MEMBER(dynop_host, host, register_operator) && host->register_operator(host, &op) != DYNOP_OK) {
        return DYNOP_ERROR;
    }
    if (DYNOP_HAS_MEMBER(dynop_host, host, register_pass) && host->register_pass(host, &pass) != DYNOP_OK) {
        return DYNOP_ERROR;
    }
    if (DYNOP_HAS_MEMBER(dynop_host, host, select_variant) && (host->cpu_features(host) & DYNOP_CPU_AVX512BW) != 0 &&
        (host->select_variant(host, "my.fn", runs, 3) < 0 || host->register_operator(host, &op2) != DYNOP_OK)) {
        return DYNOP_ERROR;
    }
    return host->add_interface(host, &table);
}
DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (name[0] == 'g') return (dynop_function)get_info;
    if (name[0] == 'r') return (dynop_function)reg;
    return 0;
}
`

// TestHeadersCompileCleanly compiles dynop.h and the example interface
// headers, with every macro expanded, as every C and C++ standard a plugin
// might use, with -Wall -Wextra -pedantic -Werror, with each compiler the
// machine has. The headers' static asserts check the struct layouts as
// they compile.
func TestHeadersCompileCleanly(t *testing.T) {
	src := headerUse
	dir := t.TempDir()
	for _, lang := range []struct {
		ext, env, def string
		stds          []string
	}{
		{".c", "CC", "cc", []string{"c99", "c11", "c17"}},
		{".cpp", "CXX", "c++", []string{"c++11", "c++17", "c++20"}},
	} {
		file := filepath.Join(dir, "header"+lang.ext)
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		compilers := []string{cbuild.Compiler(t, lang.ext == ".cpp")}
		if other := map[string]string{".c": "clang", ".cpp": "clang++"}[lang.ext]; other != compilers[0] {
			if _, err := exec.LookPath(other); err == nil {
				compilers = append(compilers, other)
			}
		}
		for _, cc := range compilers {
			for _, std := range lang.stds {
				cmd := exec.Command(cc, "-std="+std, "-Wall", "-Wextra", "-pedantic", "-Werror", "-fsyntax-only",
					"-I", cbuild.Path("abi/include"), "-I", cbuild.Path("plugins"), file)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s -std=%s: %v\n%s", cc, std, err, out)
				}
			}
		}
	}
}

// TestCPUFeatureBits checks that every DYNOP_CPU_* macro of dynop.h is the
// bit of the feature of that name in package dispatch, and that dispatch
// knows no feature the header lacks.
func TestCPUFeatureBits(t *testing.T) {
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <dynop/dynop.h>\nint main(void) {\n")
	for _, name := range dispatch.Known() {
		fmt.Fprintf(&src, "    printf(\"%s %%llu\\n\", (unsigned long long)DYNOP_CPU_%s);\n", name, strings.ToUpper(name))
	}
	src.WriteString("    printf(\"neon %llu\\n\", (unsigned long long)DYNOP_CPU_NEON);\n    return 0;\n}\n")
	dir := t.TempDir()
	file, exe := filepath.Join(dir, "bits.c"), filepath.Join(dir, "bits")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cbuild.Compiler(t, false), "-std=c99", "-Wall", "-Werror", "-I", cbuild.Path("abi/include"), "-o", exe, file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out) // a macro dispatch knows is missing from dynop.h
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var name string
		var bits uint64
		if _, err := fmt.Sscanf(line, "%s %d", &name, &bits); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		f, ok := dispatch.Lookup(name)
		if !ok || uint64(f.Set()) != bits {
			t.Errorf("DYNOP_CPU_%s = %#x; dispatch says %#x", strings.ToUpper(name), bits, uint64(f.Set()))
		}
	}
	// And the other way: every macro in the header is a feature dispatch knows.
	header, err := os.ReadFile(cbuild.Path("abi/include/dynop/dynop.h"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`#define DYNOP_CPU_([A-Z0-9]+) `).FindAllStringSubmatch(string(header), -1) {
		if _, ok := dispatch.Lookup(strings.ToLower(m[1])); !ok {
			t.Errorf("dynop.h defines DYNOP_CPU_%s, which dispatch does not know", m[1])
		}
	}
}
