module github.com/dynop/dynop/bench

go 1.26.0

require (
	github.com/disintegration/imaging v1.6.2
	github.com/dynop/dynop v0.0.0
)

require (
	golang.org/x/image v0.47.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/dynop/dynop => ../
