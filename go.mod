module github.com/dynop/dynop

go 1.26.0

require (
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)

require github.com/tetratelabs/wazero v1.12.0

require github.com/bytecodealliance/wasmtime-go/v37 v37.0.0
