package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/dynop/dynop/internal/demo"
)

// TestDemoLifecycleOrder runs the demo and checks that the lifecycle
// happens in the order it claims: the greeter's start starts the text
// plugin, which finishes first; releasing stops the greeter, then the text
// plugin; nothing leaks.
func TestDemoLifecycleOrder(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	order := []string{
		"== open",
		"dynop.plugin.greeter   v1.0.0  available",
		`msg="plugin starting" plugin=dynop.plugin.greeter`,
		`msg="plugin starting" plugin=dynop.plugin.text`,
		`msg="plugin started" plugin=dynop.plugin.text`,
		`msg="plugin started" plugin=dynop.plugin.greeter`,
		"dynop.plugin.text      v1.0.0  started   refs=1",
		`Greet("plugin world") = "Hello, Plugin World!"`,
		"errors.Is ErrVersion: true",
		`msg="plugin stopping" plugin=dynop.plugin.greeter`,
		`msg="greeter: Unload`,
		`msg="plugin stopped" plugin=dynop.plugin.greeter`,
		`msg="plugin stopping" plugin=dynop.plugin.text`,
		`msg="text: Stop"`,
		`msg="plugin stopped" plugin=dynop.plugin.text`,
		"dynop.plugin.text      v1.0.0  available refs=0 starts=1 stops=1",
		"closed cleanly",
	}
	demo.CheckOrder(t, out.String(), order...)
}
