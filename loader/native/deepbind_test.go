package native_test

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/internal/cbuild"
)

// TestDeepBindRuleInCPrograms runs the RTLD_DEEPBIND safety rule
// (deepbind.c) in C and C++ programs built as PIE and as non-PIE
// executables. A non-PIE program that takes the address of malloc (as
// Debian's /usr/bin/python3 does, which loads libdynop.so with ctypes)
// has an undefined symbol malloc with the address of its PLT entry, which
// dlsym(RTLD_DEFAULT) returns: the rule must not take it for a replaced
// allocator. A program that does replace it, or an allocator preloaded,
// or a C++ program's copy of std::cout, must still make it unsafe.
func TestDeepBindRuleInCPrograms(t *testing.T) {
	cc := cbuild.Compiler(t, false)
	dir := t.TempDir()
	preloaded, err := cbuild.Build(cc, dir, "libmymalloc.so", "loader/native/testdata/bundled/mymalloc.c", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pie := map[bool][]string{true: {"-fPIE", "-pie"}, false: {"-fno-pie", "-no-pie"}}
	// The rule, compiled once for each kind of executable.
	rule := map[bool]string{}
	for _, p := range []bool{true, false} {
		rule[p] = filepath.Join(dir, map[bool]string{true: "deepbind-pie.o", false: "deepbind-nopie.o"}[p])
		args := []string{"-c", "-O2", "-Wall", "-Wextra", "-Werror", pie[p][0], "-I", cbuild.Path("loader/native"),
			"-I", cbuild.Path("abi/include"), "-o", rule[p], cbuild.Path("loader/native/deepbind.c")}
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
		}
	}
	cases := []struct {
		name    string
		src     string // in loader/native/testdata/deepbind
		pie     bool
		flags   []string
		preload string
		want    []string // in the output; "unsafe=0" first where it is safe
		stubs   []string // undefined symbols that a non-PIE program must have with a PLT address
	}{
		{name: "C non-PIE", src: "host.c", want: []string{"unsafe=0 why=\n"}, stubs: []string{"malloc", "free"}},
		{name: "C PIE", src: "host.c", pie: true, want: []string{"unsafe=0 why=\n"}},
		{name: "C non-PIE own malloc", src: "host.c", flags: []string{"-DOWN_MALLOC"},
			want: []string{"unsafe=1 ", "replaces libc's malloc (with ", "c-non-pie-own-malloc's)"}},
		{name: "C PIE own malloc", src: "host.c", pie: true, flags: []string{"-DOWN_MALLOC"},
			want: []string{"unsafe=1 ", "replaces libc's malloc (with ", "c-pie-own-malloc's)"}},
		// The PLT entry comes first in the global scope and hides the
		// preloaded allocator from dlsym: the rule must look past it.
		{name: "C non-PIE malloc preloaded", src: "host.c", preload: preloaded, stubs: []string{"malloc", "free"},
			want: []string{"unsafe=1 ", "replaces libc's malloc (with " + preloaded + "'s)"}},
		{name: "C PIE malloc preloaded", src: "host.c", pie: true, preload: preloaded,
			want: []string{"unsafe=1 ", "replaces libc's malloc (with " + preloaded + "'s)"}},
		{name: "C++ non-PIE", src: "host.cpp", want: []string{"unsafe=0 why=\n"}, stubs: []string{"_Znwm", "_ZdlPv"}},
		{name: "C++ PIE", src: "host.cpp", pie: true, want: []string{"unsafe=0 why=\n"}},
		// A copy of std::cout in the executable is a definition, PIE or not.
		{name: "C++ non-PIE cout", src: "host.cpp", flags: []string{"-DUSE_COUT"},
			want: []string{"unsafe=1 ", "has its own _ZSt4cout (in ", "c++-non-pie-cout)"}},
		{name: "C++ PIE cout", src: "host.cpp", pie: true, flags: []string{"-DUSE_COUT"},
			want: []string{"unsafe=1 ", "has its own _ZSt4cout (in ", "c++-pie-cout)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cxx := strings.HasSuffix(c.src, ".cpp")
			compiler := cc
			if cxx {
				compiler = cbuild.Compiler(t, true)
			}
			prog := filepath.Join(dir, strings.ReplaceAll(strings.ToLower(c.name), " ", "-"))
			args := append(append([]string{"-O2", "-Wall", "-Wextra", "-Werror"}, pie[c.pie]...), c.flags...)
			args = append(args, "-o", prog, cbuild.Path("loader/native/testdata/deepbind/"+c.src), rule[c.pie], "-ldl")
			if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", compiler, strings.Join(args, " "), err, out)
			}
			checkExecutable(t, prog, c.pie, c.stubs)
			cmd := exec.Command(prog)
			if c.preload != "" {
				cmd.Env = append(cmd.Environ(), "LD_PRELOAD="+c.preload)
			}
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if err != nil {
				t.Fatalf("%s: %v", prog, err)
			}
			for i, w := range c.want {
				if (i == 0 && !strings.HasPrefix(string(out), w)) || !strings.Contains(string(out), w) {
					t.Errorf("want %q in the verdict", w)
				}
			}
		})
	}
}

// checkExecutable checks that the program at path is what the test means
// it to be: a PIE (ELF type DYN) or not (EXEC), and, if not, that it has
// each of stubs as an undefined symbol with a nonzero value, its PLT
// entry's address, which is what the rule must see past.
func checkExecutable(t *testing.T, path string, pie bool, stubs []string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if want := map[bool]elf.Type{true: elf.ET_DYN, false: elf.ET_EXEC}[pie]; f.Type != want {
		t.Fatalf("%s is %v, want %v", path, f.Type, want)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range stubs {
		found := false
		for _, s := range syms {
			if s.Name == name && s.Section == elf.SHN_UNDEF && s.Value != 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%s has no undefined %s with a PLT address: the test does not test what it means to", path, name)
		}
	}
}
