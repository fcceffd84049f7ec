package suggest

import "testing"

func TestNearest(t *testing.T) {
	if got := Nearest("lsit", []string{"list", "inspect", "run"}); got != "list" {
		t.Errorf(`Nearest("lsit") = %q, want "list": two letters swapped are one edit`, got)
	}
	known := []string{"dynop.plugin.text", "dynop.plugin.greeter", "acme.plugin.blur"}
	for _, tc := range []struct{ name, want string }{
		{"dynop.plugin.txt", "dynop.plugin.text"},
		{"dynop.plugin.greter", "dynop.plugin.greeter"},
		{"acme.plugin.blur", "acme.plugin.blur"},
		{"acme.plugin.sharpen", ""},
		{"dynop.plugin.txet", "dynop.plugin.text"}, // a swap is one edit
		{"", ""},
	} {
		if got := Nearest(tc.name, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"lsit", "list", 1}, {"ab", "ba", 1}, {"abc", "ca", 3}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
