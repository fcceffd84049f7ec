package lazy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

type provider struct{ calls, released int }

func (p *provider) Provide(_ context.Context, name string) (int, func() error, error) {
	p.calls++
	if name == "broken" {
		return 0, nil, errors.New("cannot start")
	}
	return len(name), func() error { p.released++; return nil }, nil
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	r := New(func(name string, old *Entry[string, int]) error {
		return fmt.Errorf("%q is taken (by %q)", name, old.Plugin)
	})
	removeTwo, err := r.Add("two", &Entry[string, int]{Desc: "registered", Value: 2})
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{}
	if _, err := r.Add("three", &Entry[string, int]{Desc: "declared", Plugin: "acme", Provider: p}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Add("two", &Entry[string, int]{Plugin: "other", Provider: p}); err == nil || err.Error() != `"two" is taken (by "")` {
		t.Errorf("adding a taken name: %v", err)
	}
	if got := r.Names(); !slices.Equal(got, []string{"three", "two"}) {
		t.Errorf("Names() = %v", got)
	}
	if es := r.Entries(); len(es) != 2 || es[0].Desc != "declared" || es[1].Desc != "registered" {
		t.Errorf("Entries() = %v", es)
	}

	e, ok := r.Get("two")
	if !ok || e.Declared() {
		t.Fatalf("Get(two) = %v, %t", e, ok)
	}
	v, release, err := e.Get(ctx, "two")
	if v != 2 || err != nil || release() != nil || p.calls != 0 {
		t.Errorf("registered entry: %d, %v; provider called %d times", v, err, p.calls)
	}
	e, _ = r.Get("three")
	v, release, err = e.Get(ctx, "three")
	if !e.Declared() || v != 5 || err != nil || p.calls != 1 {
		t.Fatalf("declared entry: %d, %v; provider called %d times", v, err, p.calls)
	}
	if release(); p.released != 1 {
		t.Errorf("release ran %d times", p.released)
	}
	if _, _, err := (&Entry[string, int]{Provider: p}).Get(ctx, "broken"); err == nil || err.Error() != "cannot start" {
		t.Errorf("a provider's error: %v", err)
	}

	removeTwo()
	if _, ok := r.Get("two"); ok {
		t.Error("removed entry still there")
	}
	removeNew, err := r.Add("two", &Entry[string, int]{Value: 22})
	if err != nil {
		t.Fatal(err)
	}
	removeTwo() // a stale remove leaves the new entry alone
	if e, ok := r.Get("two"); !ok || e.Value != 22 {
		t.Errorf("a stale remove took the new entry: %v, %t", e, ok)
	}
	removeNew()
	if _, ok := r.Get("two"); ok {
		t.Error("second remove did not remove")
	}
}
