// Package demo holds what the demo programs under examples/ share: a log
// that reads well on a terminal, and the check their tests make of it.
package demo

import (
	"io"
	"log/slog"
	"strings"
	"testing"
)

// Logger returns a debug-level text logger to out without timestamps, so
// that a demo's output reads as a story and can be compared in tests.
func Logger(out io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{}
			}
			return a
		},
	}))
}

// CheckOrder fails t unless text contains each of want, in that order.
func CheckOrder(t testing.TB, text string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Fatalf("demo output lacks %q after position %d:\n%s", w, at, text)
		}
		at += i + len(w)
	}
}
