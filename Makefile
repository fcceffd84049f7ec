# dynop — the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go

# Native plugins: C99 and C++17, warnings as errors, every symbol hidden
# but the entry point (DYNOP_EXPORT). internal/cbuild builds the same way
# for the tests. -fno-gnu-unique keeps C++ libraries unloadable.
PLUGIN_FLAGS = -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -pedantic -Werror -Iabi/include
PLUGIN_CFLAGS = -std=c99
PLUGIN_CXXFLAGS = -std=c++17 -fno-gnu-unique
PLUGINS = plugins/vecmath/libdynop_vecmath.so plugins/stats/libdynop_stats.so plugins/imgproc/libdynop_imgproc.so

.PHONY: demo examples test bench build plugins clean

## demo: the main job. Build the CLI and the example plugins, run the
## demo pipeline over the bundled images and say where the results are.
## The CLI finds the C plugins in bin/plugins, next to it, by their manifests.
demo: build
	bin/dynop run examples/pipelines/demo.yaml --trace examples/pipelines/out/trace.json
	@echo "results: examples/pipelines/out/*.png (trace: examples/pipelines/out/trace.json, open it in ui.perfetto.dev)"

## examples: run the other example host programs over the example plugins.
examples: plugins
	$(GO) run ./examples/lifecycle
	$(GO) run ./examples/native $(PLUGINS)
	$(GO) run ./examples/operators plugins/imgproc/libdynop_imgproc.so

## test: vet, every test with the race detector (cgo pointer checks on),
## then the cgo packages again with the strict pointer checks of cgocheck2.
test:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	GODEBUG=cgocheck=1 $(GO) test -race ./...
	GOEXPERIMENT=cgocheck2 $(GO) test -count=1 ./loader/... ./plugins/... ./examples/native/ ./examples/operators/ ./cmd/dynop/

## bench: every benchmark, with allocations; then, in the separate module
## bench/, dynop against its peers (imaging) and the machine's bandwidth,
## on one core and on two.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -cpu 1,2

## build: build the dynop CLI into ./bin, and the example native plugins
## into ./bin/plugins (where the CLI looks) with their manifests.
build: plugins
	$(GO) build -o bin/dynop ./cmd/dynop
	mkdir -p bin/plugins
	cp $(PLUGINS) bin/plugins/
	bin/dynop manifest bin/plugins/*.so

## plugins: build the example native plugins next to their sources.
plugins: $(PLUGINS)

plugins/vecmath/libdynop_vecmath.so: plugins/vecmath/c/vecmath.c plugins/vecmath/vecmath.h abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) -o $@ $<

# imgproc: no fused multiply-adds, so that its SIMD variants compute the
# scalar reference's floats bit for bit, and sqrtf as an instruction rather
# than a call into libm, which the library does not link. internal/cbuild's
# Imgproc builds it the same way.
IMGPROC_CFLAGS = -ffp-contract=off -fno-math-errno

plugins/imgproc/libdynop_imgproc.so: plugins/imgproc/c/imgproc.c abi/include/dynop/dynop.h
	$(CC) $(PLUGIN_CFLAGS) $(PLUGIN_FLAGS) $(IMGPROC_CFLAGS) -o $@ $<

plugins/stats/libdynop_stats.so: plugins/stats/cpp/stats.cpp plugins/stats/stats.h plugins/vecmath/vecmath.h abi/include/dynop/dynop.h
	$(CXX) $(PLUGIN_CXXFLAGS) $(PLUGIN_FLAGS) -o $@ $<

clean:
	rm -rf bin $(PLUGINS)
