package friend

import (
	"strings"
	"testing"
)

type double func(int) int

func TestSetGet(t *testing.T) {
	Set(double(func(x int) int { return 2 * x }))
	if got := Get[double]()(21); got != 42 {
		t.Errorf("Get[double]()(21) = %d, want 42", got)
	}
	wantPanic(t, "a second function of type friend.double", func() { Set(double(func(x int) int { return x })) })
	wantPanic(t, "no function of type func(string) bool is registered", func() { Get[func(string) bool]() })
}

func wantPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		p := recover()
		if s, _ := p.(string); !strings.Contains(s, want) {
			t.Errorf("panic %v, want one saying %q", p, want)
		}
	}()
	f()
}
