// Package bench compares dynop with its peers and with the machine's
// limits, side by side in one run: ratios hold on shared machines where
// absolute times drift.
//
// It is a module of its own so that the peers it measures against
// (github.com/disintegration/imaging, …) never enter the dependencies of
// github.com/dynop/dynop. Run it from the repository root with
//
//	make bench
//
// or here with go test -run '^$' -bench . -benchmem -cpu 1,2.
package bench
