package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/dynop/dynop"
)

// interrupts is how [Main] handles SIGINT and SIGTERM, for every command:
// the first one cancels the command's context, a graceful stop (a pipeline
// stops between batches and writes nothing, a scan is killed, plugins are
// stopped), and says so on stderr; a second one ends the process at once
// with status 128 + its number (130 for SIGINT, 143 for SIGTERM), as Go's
// tools and Docker do, for a plugin's code may never return (a register
// that blocks), and then no context can stop it.
type interrupts struct {
	ch     chan os.Signal
	done   chan struct{}
	exited chan struct{} // closed when the goroutine returns
	cancel context.CancelFunc
	stderr io.Writer
	exit   func(int) // os.Exit, or a test's

	mu    sync.Mutex
	first os.Signal // the signal that cancelled the context; nil if none came
}

// catchInterrupts starts handling SIGINT and SIGTERM as [interrupts]
// says and returns the context they cancel; stop ends the handling.
func catchInterrupts(parent context.Context, stderr io.Writer, exit func(int)) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancel(parent)
	in := &interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{}), exited: make(chan struct{}),
		cancel: cancel, stderr: stderr, exit: exit}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go in.loop()
	return ctx, in
}

func (in *interrupts) loop() {
	defer close(in.exited)
	for {
		select {
		case <-in.done:
			return
		case s := <-in.ch:
			in.mu.Lock()
			first := in.first == nil
			if first {
				in.first = s
			}
			in.mu.Unlock()
			if first {
				fmt.Fprintf(in.stderr, "dynop: %s: stopping; press Ctrl-C again (or send the signal again) to exit at once\n", signalName(s))
				in.cancel()
				continue
			}
			fmt.Fprintf(in.stderr, "dynop: %s again: exiting at once\n", signalName(s))
			in.exit(exitStatus(s))
			return
		}
	}
}

// stop ends the handling: signals have their default effect again.
func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.done)
	<-in.exited
	in.cancel()
}

// status returns the exit status of a command that returned code: code,
// unless a signal stopped the command and it failed, when it is 128 + the
// signal's number, as if the signal had ended the process.
func (in *interrupts) status(code int) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.first != nil && code != 0 {
		return exitStatus(in.first)
	}
	return code
}

// exitStatus is the status of a process ended by s: 128 + its number.
func exitStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return 1
}

// signalName names s as a shell would say it ended a process.
func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "interrupted"
	case syscall.SIGTERM:
		return "terminated"
	}
	return s.String()
}

// closeAll closes what a command opened, pipelines (or anything else that
// closes) first, then the host, and prints on stderr, as warnings, what
// went wrong: stopping the plugins runs their code, and a plugin's
// deregister may fail (the plugin is unloaded regardless). Nothing the
// command did is undone by that, so the command's own error, if any, is
// all closeAll returns; see "Exit status" in the package documentation.
func closeAll(stderr io.Writer, h *dynop.Host, closers ...interface{ Close() error }) {
	var errs []error
	for _, c := range closers {
		errs = append(errs, c.Close())
	}
	errs = append(errs, h.Close(context.Background()))
	warn(stderr, errors.Join(errs...))
}

// warn prints err on stderr, each line a warning, escaped: it may carry
// what a plugin said.
func warn(stderr io.Writer, err error) {
	if err == nil {
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(stderr, "dynop: warning: %s\n", escapeCell(line))
		}
	}
}
