package english

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n          int
		noun, want string
	}{
		{0, "batch", "0 batches"},
		{1, "batch", "1 batch"},
		{2, "batch", "2 batches"},
		{1, "plugin file", "1 plugin file"},
		{3, "plugin file", "3 plugin files"},
		{2, "key", "2 keys"},
		{2, "dependency", "2 dependencies"},
		{2, "box", "2 boxes"},
		{2, "bus", "2 buses"},
		{2, "wish", "2 wishes"},
		{2, "GPU", "2 GPUs"},
		{-1, "image", "-1 image"},
		{-2, "image", "-2 images"},
	} {
		if got := Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	if got := Noun(4, "batch"); got != "batches" {
		t.Errorf("Noun(4, batch) = %q", got)
	}
	if got := Noun(1, "batch"); got != "batch" {
		t.Errorf("Noun(1, batch) = %q", got)
	}
}

func TestQuoted(t *testing.T) {
	for _, c := range []struct {
		items []string
		want  string
	}{
		{nil, ""},
		{[]string{"image.Resize"}, `"image.Resize"`},
		{[]string{"image.Resize", "imgproc.Resize"}, `"image.Resize" or "imgproc.Resize"`},
		{[]string{"a", "b", "c"}, `"a", "b" or "c"`},
	} {
		if got := Quoted(c.items, "or"); got != c.want {
			t.Errorf("Quoted(%q) = %s, want %s", c.items, got, c.want)
		}
	}
}
