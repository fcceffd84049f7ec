# dynop — the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go

# Native plugins: C99 and C++17, warnings as errors, every symbol hidden
# but the entry point (DYNOP_EXPORT). internal/cbuild builds the same way
# for the tests. -fno-gnu-unique keeps C++ libraries unloadable.
PLUGIN_FLAGS = -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -pedantic -Werror -Iabi/include
PLUGIN_CFLAGS = -std=c99
PLUGIN_CXXFLAGS = -std=c++17 -fno-gnu-unique
PLUGINS = plugins/vecmath/libdynop_vecmath.so plugins/stats/libdynop_stats.so plugins/imgproc/libdynop_imgproc.so

# The native codec plugin links libturbojpeg, libpng and libwebp (flags
# from pkg-config where it knows them). It is built when their headers
# are there, and skipped with a note otherwise (apt-get install
# libturbojpeg0-dev libpng-dev libwebp-dev); internal/cbuild's Codec makes
# the same check and skips the tests that need it.
CODEC_PKGS = libturbojpeg libpng libwebp
CODEC_CFLAGS := $(shell pkg-config --cflags $(CODEC_PKGS) 2>/dev/null)
CODEC_LIBS := $(shell pkg-config --libs $(CODEC_PKGS) 2>/dev/null || echo -lturbojpeg -lpng -lwebp)
CODEC_FOUND := $(shell printf '\043include <turbojpeg.h>\n\043include <png.h>\n\043include <webp/decode.h>\n\043include <webp/encode.h>\n' | $(CC) -E -x c $(CODEC_CFLAGS) -o /dev/null - 2>/dev/null && echo yes)
ifeq ($(CODEC_FOUND),yes)
PLUGINS += plugins/codec/libdynop_codec.so
endif

# The native blas plugin wraps OpenBLAS through cblas.h (flags from
# pkg-config openblas, else -lopenblas). It is built when cblas.h is
# there, and skipped with a note otherwise (apt-get install
# libopenblas-dev); internal/cbuild's BLAS makes the same check and skips
# the tests that need it.
BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
BLAS_FOUND := $(shell printf '\043include <cblas.h>\n' | $(CC) -E -x c $(BLAS_CFLAGS) -o /dev/null - 2>/dev/null && echo yes)
ifeq ($(BLAS_FOUND),yes)
PLUGINS += plugins/blas/libdynop_blas.so
endif

# WebAssembly plugins: the scalar C of imgproc with the shim of abi/wasm
# (clang, lld and wasi-libc; internal/cbuild's ImgprocWasm builds it the
# same way), and the Go example tone (GOOS=wasip1). They are built when
# clang can target wasm32-wasi, and skipped with a note otherwise.
WASM_CC ?= clang
WASM_CFLAGS = --target=wasm32-wasi -mexec-model=reactor -O3 -msimd128 -std=c99 -Wall -Wextra -pedantic -Werror -Iabi/include
WASM_PLUGINS = plugins/imgproc/dynop_imgproc.wasm plugins/tone/dynop_tone.wasm

.PHONY: demo examples test fuzz bench build plugins wasm-plugins clean libdynop python pytest wheel install uninstall installcheck

## demo: the main job. Build the CLI and the example plugins, run the
## demo pipeline over the bundled images and the photo pipeline over the
## bundled photos, and say where the results are.
## The CLI finds the C plugins in bin/plugins, next to it, by their manifests.
demo: build
	bin/dynop run examples/pipelines/demo.yaml --trace examples/pipelines/out/trace.json
	bin/dynop run examples/pipelines/photos.yaml
	@echo "results: examples/pipelines/out/*.png and out/photos/*.jpg (trace: examples/pipelines/out/trace.json, open it in ui.perfetto.dev)"

## examples: run the other example host programs over the example plugins.
examples: plugins
	$(GO) run ./examples/lifecycle
	$(GO) run ./examples/native $(PLUGINS)
	$(GO) run ./examples/operators plugins/imgproc/libdynop_imgproc.so
	$(GO) run ./examples/embedding $(PLUGINS)

## test: gofmt (fails on a file it would change), vet, every test with
## the race detector (cgo pointer checks on),
## then the cgo packages again with the strict pointer checks of cgocheck2.
test:
	@out=$$("$$($(GO) env GOROOT)/bin/gofmt" -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	GODEBUG=cgocheck=1 $(GO) test -race ./...
	cd bench && GODEBUG=cgocheck=1 $(GO) test -race ./...
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./loader/... ./plugins/... ./examples/native/ ./examples/operators/ ./examples/embedding/ ./docs/authoring/... ./cli/
	CGO_ENABLED=0 $(GO) test ./loader/wasm/

## fuzz: run each fuzz target for FUZZTIME (go test -fuzz takes one
## target of one package per run, hence the list). A failing input is
## written to the package's testdata/fuzz/, where `make test` runs it
## from then on as a regression test; fix the parser and commit it.
## FUZZFLAGS adds flags, such as -parallel 1.
## Go 1.26's fuzzing coordinator may end a run that found nothing with a
## bare "context deadline exceeded" as -fuzztime expires
## (go.dev/issue/75804, fixed in Go 1.27): such a run, which wrote no
## failing input, is reported and counted as passed.
FUZZTIME ?= 30s
FUZZFLAGS ?=
FUZZ_TARGETS = \
	iface:FuzzParseUID iface:FuzzParseVersion \
	dispatch:FuzzParse \
	tensor:FuzzParseDType tensor:FuzzDTypeString \
	sign:FuzzParseDigest sign:FuzzParsePolicy sign:FuzzParseSignature sign:FuzzParsePublicKey sign:FuzzParsePrivateKey \
	op:FuzzSchemaJSON op:FuzzTypeText op:FuzzCheck schema:FuzzPassName \
	machine:FuzzParseDriverVersion \
	discover:FuzzParseManifest discover:FuzzDecodeCache \
	pipeline:FuzzParse pipeline:FuzzReadJournal pipeline:FuzzParseShard pipeline:FuzzReadList \
	internal/abihost:FuzzDecodeInfo internal/ldso:FuzzParseCache internal/ldso:FuzzReadObject loader/wasm:FuzzModuleInfo loader/native:FuzzNativeInfo \
	.:FuzzParseSandboxPolicy loader/wasm:FuzzDecodeEntry loader/wasm:FuzzExportTable loader/wasm:FuzzWASI internal/capi:FuzzOptionsJSON \
	plugins/codec:FuzzCodecDecode plugins/codec:FuzzCodecEXIF plugins/image:FuzzImageEXIF
fuzz:
	@set -e; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; target=$${t#*:}; \
		echo "fuzz: ./$$pkg $$target for $(FUZZTIME)"; \
		if $(GO) test -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) ./$$pkg >"$$log" 2>&1; then cat "$$log"; \
		elif grep -q 'context deadline exceeded' "$$log" && ! grep -q 'Failing input written' "$$log"; then \
			cat "$$log"; echo "fuzz: $$target: the coordinator's deadline race (go.dev/issue/75804), no failing input: passed"; \
		else cat "$$log"; exit 1; fi; \
	done

## bench: the benchmark suite (bench/cmd/perf): dynop against its peers
## (Go's plugin package, cgo, wazero, hashicorp/go-plugin, imaging) and
## the machine's limits, each against its reference in the same run;
## writes docs/PERFORMANCE.md, the plots and the raw output (for benchstat)
## in docs/perf/. COUNT runs of each benchmark (medians); a few minutes.
COUNT ?= 5
bench:
	cd bench && GO=$(GO) $(GO) run ./cmd/perf -count $(COUNT)

## build: build the dynop CLI into ./bin, and the example native plugins
## into ./bin/plugins (where the CLI looks) with their manifests.
build: plugins
	$(GO) build -o bin/dynop ./cmd/dynop
	mkdir -p bin/plugins
	cp $(PLUGINS) bin/plugins/
	@if [ "$(CODEC_FOUND)" != yes ]; then echo "note: the headers of libturbojpeg, libpng or libwebp are missing (apt-get install libturbojpeg0-dev libpng-dev libwebp-dev): the native codec plugin is not built, and pipelines decode and encode with Go's image packages"; fi
	@if [ "$(BLAS_FOUND)" != yes ]; then echo "note: OpenBLAS's cblas.h is missing (apt-get install libopenblas-dev): the native blas plugin is not built"; fi
	bin/dynop manifest bin/plugins/*.so
	@if echo 'int x;' | $(WASM_CC) --target=wasm32-wasi -x c -c -o /dev/null - 2>/dev/null; then \
		$(MAKE) --no-print-directory wasm-plugins && cp $(WASM_PLUGINS) bin/plugins/ && bin/dynop manifest bin/plugins/*.wasm; \
	else echo "note: $(WASM_CC) cannot target wasm32-wasi (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32): WebAssembly plugins not built"; fi

## install: install what build makes under PREFIX (default /usr/local;
## DESTDIR is prepended, for packaging): the CLI as PREFIX/bin/dynop, the
## example plugins and their manifests in PREFIX/lib/dynop/plugins (which
## an executable installed as PREFIX/bin/dynop searches), and the C
## headers in PREFIX/include/dynop (`dynop include-dir` prints it).
## uninstall removes what install put there, not plugins a user added.
PREFIX ?= /usr/local
INSTALL_PLUGINS = $(DESTDIR)$(PREFIX)/lib/dynop/plugins
install: build
	install -d $(DESTDIR)$(PREFIX)/bin $(INSTALL_PLUGINS) $(DESTDIR)$(PREFIX)/include/dynop
	install -m 0755 bin/dynop $(DESTDIR)$(PREFIX)/bin/dynop
	for f in bin/plugins/*; do \
		case $$f in *.dynop.json|*.dynop.sig|*.wasm) mode=0644;; *) mode=0755;; esac; \
		install -m $$mode $$f $(INSTALL_PLUGINS)/ || exit 1; \
	done
	install -m 0644 abi/include/dynop/*.h abi/include/dynop/*.hpp $(DESTDIR)$(PREFIX)/include/dynop/
	install -d $(DESTDIR)$(PREFIX)/share/dynop/rust/src
	install -m 0644 abi/rust/Cargo.toml abi/rust/README.md $(DESTDIR)$(PREFIX)/share/dynop/rust/
	install -m 0644 abi/rust/src/*.rs $(DESTDIR)$(PREFIX)/share/dynop/rust/src/
	@echo "installed dynop in $(DESTDIR)$(PREFIX): bin/dynop, lib/dynop/plugins, include/dynop, share/dynop/rust"

# uninstall removes what install put there and the directories left
# empty, not plugins a user added to PREFIX/lib/dynop/plugins.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/dynop
	for f in bin/plugins/*; do rm -f "$(INSTALL_PLUGINS)/$${f##*/}"; done
	for f in abi/include/dynop/*; do rm -f "$(DESTDIR)$(PREFIX)/include/dynop/$${f##*/}"; done
	rm -rf $(DESTDIR)$(PREFIX)/share/dynop/rust
	-rmdir $(INSTALL_PLUGINS) $(DESTDIR)$(PREFIX)/lib/dynop $(DESTDIR)$(PREFIX)/include/dynop $(DESTDIR)$(PREFIX)/share/dynop 2>/dev/null

## installcheck: make install into a new temporary PREFIX, then run the
## demo pipeline with the installed dynop from another directory (no
## ./bin on the way), check it wrote its images and that `dynop
## include-dir` names the installed headers.
installcheck:
	@set -e; prefix=$$(mktemp -d); out=$$(mktemp -d); here=$$(pwd); \
	$(MAKE) --no-print-directory install PREFIX=$$prefix >/dev/null; \
	cd $$out && env -u DYNOP_PLUGIN_PATH $$prefix/bin/dynop run --out $$out/images $$here/examples/pipelines/demo.yaml >$$out/log 2>&1 || { cat $$out/log; exit 1; }; \
	n=$$(ls $$out/images | wc -l); [ $$n -ge 3 ] || { echo "installcheck: the installed dynop wrote $$n files"; cat $$out/log; exit 1; }; \
	inc=$$($$prefix/bin/dynop include-dir); [ "$$inc" = "$$prefix/include" ] || { echo "installcheck: dynop include-dir says $$inc, not $$prefix/include"; exit 1; }; \
	$$prefix/bin/dynop new --lang rust --no-check --dir $$out/proj demo >/dev/null; \
	grep -q "path = \"$$prefix/share/dynop/rust\"" $$out/proj/Cargo.toml || { echo "installcheck: dynop new --lang rust does not use the installed crate:"; grep dynop $$out/proj/Cargo.toml; exit 1; }; \
	echo "installcheck: dynop installed in $$prefix ran the demo from $$out: $$n files"; rm -rf $$prefix $$out

## libdynop: the C API for hosts that are not Go programs (docs/c-api.md):
## bin/libdynop.so and bin/libdynop.a, bin/dynop-scanner beside them (the
## scanner child of their hosts) and the headers dynop.h, dynop_host.h
## and dynop_host.hpp in bin/include/dynop. Link with -Ibin/include -Lbin
## -ldynop -Wl,-rpath,<the library's directory>. The shared library
## exports dynop_host.h's functions only (capi/libdynop.map).
libdynop:
	$(GO) build -buildmode=c-shared -ldflags=-extldflags=-Wl,--version-script=$(CURDIR)/capi/libdynop.map -o bin/libdynop.so ./capi
	$(GO) build -buildmode=c-archive -o bin/libdynop.a ./capi
	cp "$$($(GO) list -m -f '{{.Dir}}' github.com/bytecodealliance/wasmtime-go/v37)/build/linux-$$(uname -m)/libwasmtime.a" bin/
	chmod u+w bin/libwasmtime.a
	$(GO) build -o bin/dynop-scanner ./cmd/dynop-scanner
	rm -f bin/libdynop.h
	mkdir -p bin/include/dynop
	cp abi/include/dynop/dynop.h abi/include/dynop/dynop_host.h abi/include/dynop/dynop_host.hpp bin/include/dynop/

## wasm-plugins: build the example WebAssembly plugins next to their sources.
wasm-plugins: $(WASM_PLUGINS)

plugins/imgproc/dynop_imgproc.wasm: $(wildcard plugins/imgproc/c/*.c) abi/wasm/dynop_wasm.c abi/include/dynop/dynop.h abi/include/dynop/dynop_wasm.h
	$(WASM_CC) $(WASM_CFLAGS) $(IMGPROC_CFLAGS) -o $@ plugins/imgproc/c/imgproc.c abi/wasm/dynop_wasm.c

plugins/tone/dynop_tone.wasm: plugins/tone/*.go $(wildcard loader/wasm/guest/*.go)
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -buildmode=c-shared -o $@ ./plugins/tone

## plugins: build the example native plugins next to their sources.
plugins: $(PLUGINS)

plugins/vecmath/libdynop_vecmath.so: plugins/vecmath/c/vecmath.c plugins/vecmath/vecmath.h abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) -o $@ $<

# imgproc: no fused multiply-adds, so that its SIMD variants compute the
# scalar reference's floats bit for bit, and sqrtf as an instruction rather
# than a call into libm, which the library does not link. internal/cbuild's
# Imgproc builds it the same way.
IMGPROC_CFLAGS = -ffp-contract=off -fno-math-errno

# It is one translation unit: imgproc.c includes the other files of c/.
plugins/imgproc/libdynop_imgproc.so: plugins/imgproc/c/imgproc.c $(wildcard plugins/imgproc/c/*.c) abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) $(IMGPROC_CFLAGS) -o $@ $<

# codec: the native codecs, linked with the libraries (after the source).
plugins/codec/libdynop_codec.so: plugins/codec/c/codec.c abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) $(CODEC_CFLAGS) -o $@ $< $(CODEC_LIBS)

# blas: wraps OpenBLAS, linked after the source.
plugins/blas/libdynop_blas.so: plugins/blas/c/blas.c plugins/blas/blas.h abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) $(BLAS_CFLAGS) -o $@ $< $(BLAS_LIBS)

plugins/stats/libdynop_stats.so: plugins/stats/cpp/stats.cpp plugins/stats/stats.h plugins/vecmath/vecmath.h abi/include/dynop/dynop.h
	$(CXX) $(PLUGIN_CXXFLAGS) $(PLUGIN_FLAGS) -o $@ $<

# The Python package (python/dynop, over bin/libdynop.so through ctypes):
# its one C helper, the destructor of the DLPack capsules it hands out
# (python/dynop/_capsule.c; it does not link against libpython), and its
# tests. Not part of `make test`.
PYTHON ?= /usr/bin/python3

python/dynop/_dynop_capsule.so: python/dynop/_capsule.c
	$(CC) -std=c99 -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $<

# The example plugins the package searches by default (a wheel carries
# them in dynop/plugins/ too).
PYTHON_PLUGINS = plugins/imgproc/libdynop_imgproc.so plugins/vecmath/libdynop_vecmath.so

python: python/dynop/_dynop_capsule.so $(PYTHON_PLUGINS)
	mkdir -p python/dynop/plugins
	cp $(PYTHON_PLUGINS) python/dynop/plugins/

pytest: libdynop plugins python
	$(PYTHON) -m pytest python/tests -q

# dist/dynop-<version>-py3-none-linux_<machine>.whl: the package with
# libdynop.so, dynop-scanner, the capsule helper and the example plugins
# inside it; `pip install dist/*.whl` installs it.
wheel: libdynop python
	$(PYTHON) python/build_wheel.py dist

clean:
	rm -rf bin $(PLUGINS) plugins/codec/libdynop_codec.so plugins/blas/libdynop_blas.so $(WASM_PLUGINS) python/dynop/_dynop_capsule.so python/dynop/plugins dist
