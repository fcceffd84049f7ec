package main

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/internal/cbuild"
	"github.com/dynop/dynop/internal/demo"
)

// TestMain serves as the scanner child process when a host of the tests
// starts this binary as one, as main does.
func TestMain(m *testing.M) {
	dynop.ServeScanner()
	os.Exit(m.Run())
}

// TestDemoOrder runs the demo over freshly built plugins and checks the
// order of what it claims: loaded only once used, the C plugin started
// first, the C++ plugin stopped first, both unloaded at the end.
func TestDemoOrder(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out, []string{cbuild.VecMath(t), cbuild.Stats(t)}); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	order := []string{
		"dynop.plugin.stats   v1.0.0  available refs=0 starts=0 stops=0  libdynop_stats.so: not loaded",
		`msg="plugin starting" plugin=dynop.plugin.stats`,
		`msg="plugin starting" plugin=dynop.plugin.vecmath`,
		`msg="vecmath: registered" plugin=dynop.plugin.vecmath native=true`,
		`msg="plugin started" plugin=dynop.plugin.vecmath`,
		`msg="stats: registered over dynop.plugin.vecmath"`,
		`msg="plugin started" plugin=dynop.plugin.stats`,
		"dynop.plugin.stats   v1.0.0  started   refs=1 starts=1 stops=0  libdynop_stats.so: loaded",
		"dynop.plugin.vecmath v1.0.0  started   refs=1 starts=1 stops=0  libdynop_vecmath.so: loaded",
		"mean = 5, variance = 4, norm = 15.2315",
		`msg="plugin stopping" plugin=dynop.plugin.stats`,
		`msg="stats: deregistering; releasing dynop.plugin.vecmath"`,
		`msg="plugin stopped" plugin=dynop.plugin.stats`,
		`msg="plugin stopped" plugin=dynop.plugin.vecmath`,
		"dynop.plugin.stats   v1.0.0  available refs=0 starts=1 stops=1  libdynop_stats.so: not loaded",
		"dynop.plugin.vecmath v1.0.0  available refs=0 starts=1 stops=1  libdynop_vecmath.so: not loaded",
		"closed cleanly",
	}
	demo.CheckOrder(t, out.String(), order...)
}
