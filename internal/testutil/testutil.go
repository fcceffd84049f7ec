// Package testutil holds the helpers the module's tests share.
package testutil

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// WantErr fails the test unless err is an error that wraps target (any
// error if target is nil) and whose message contains every string in
// want.
func WantErr(t testing.TB, err, target error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one wrapping %v and saying %q", target, want)
	}
	if target != nil && !errors.Is(err, target) {
		t.Errorf("error %q does not wrap %v", err, target)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

// Logger returns a logger that writes to t's log with -v, at debug
// level, and nowhere otherwise.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// LogBuffer collects a log that a test reads: hosts log from many
// goroutines, so writes and reads are serialized.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Reset forgets what was written.
func (b *LogBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

// Logger returns a logger that writes into b, as text, at debug level.
func (b *LogBuffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// SkipNumericsUnderRace skips t under the race detector. It is for tests
// of what C kernels compute (against OpenCV, between CPU variants, against
// the WebAssembly build), where no goroutines share Go memory for the
// detector to watch and it only multiplies the time; make test runs them
// again without it (the cgocheck2 pass over ./plugins/...).
func SkipNumericsUnderRace(t testing.TB) {
	t.Helper()
	if Race {
		t.Skip("numerics of C kernels: run without -race (make test's cgocheck2 pass does)")
	}
}
