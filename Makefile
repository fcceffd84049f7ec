# dynop — the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go

.PHONY: demo test bench build vet

## demo: run the demo host program over the example plugins.
demo:
	$(GO) run ./examples/lifecycle

## test: vet, then every test with the race detector (cgo pointer checks on).
test:
	$(GO) vet ./...
	GODEBUG=cgocheck=1 $(GO) test -race ./...

## bench: every benchmark, with allocations.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## build: build the dynop CLI into ./bin.
build:
	$(GO) build -o bin/dynop ./cmd/dynop
