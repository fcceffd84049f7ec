package pipeline

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShardsCoverEveryInputOnce: three shards of one run write, between
// them, exactly the outputs of the run over all its inputs, each once,
// byte for byte and with the same names; adding files moves none of the
// files already there to another shard.
func TestShardsCoverEveryInputOnce(t *testing.T) {
	h := runHost(t)
	file := setup(t, 23, 4, "stop", "", "gamma")
	all, _, err := compileRun(t, h, file, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, filepath.Join(filepath.Dir(file), "out"))
	if all.Images != 23 || len(want) != 23 {
		t.Fatalf("unsharded run: %d images, %d outputs", all.Images, len(want))
	}
	got := map[string][]byte{}
	shardOf := map[string]int{}
	for i := range 3 {
		out := t.TempDir()
		sum, _, err := compileRun(t, h, file, Options{Shard: Shard{i, 3}, OutDir: out})
		if err != nil {
			t.Fatalf("shard %d/3: %v", i, err)
		}
		if sum.Shard != (Shard{i, 3}).String() {
			t.Errorf("shard %d/3: summary says shard %q", i, sum.Shard)
		}
		for name, data := range readAll(t, out) {
			if j, dup := shardOf[name]; dup {
				t.Errorf("%s is in shards %d and %d", name, j, i)
			}
			shardOf[name], got[name] = i, data
		}
		if sum.Images == 23 || sum.Images == 0 {
			t.Errorf("shard %d/3 ran %d of 23 inputs: not a share", i, sum.Images)
		}
	}
	if !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the shards wrote %v; the whole run %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}

	in := filepath.Join(filepath.Dir(file), "in")
	for _, e := range writePNGs(t, t.TempDir(), 9, 5, 5) {
		if err := os.Rename(e, filepath.Join(in, "new"+filepath.Base(e))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		out := t.TempDir()
		if _, _, err := compileRun(t, h, file, Options{Shard: Shard{i, 3}, OutDir: out}); err != nil {
			t.Fatal(err)
		}
		for name := range readAll(t, out) {
			if j, ok := shardOf[name]; ok && j != i {
				t.Errorf("%s moved from shard %d to %d when files were added", name, j, i)
			}
		}
	}
}

// TestShardWithNoShare: a shard that none of the inputs fall into runs
// nothing and succeeds.
func TestShardWithNoShare(t *testing.T) {
	h := runHost(t)
	file := setup(t, 2, 1, "stop", "", "gamma")
	empty, images := 0, 0
	for i := range 40 {
		sum, _, err := compileRun(t, h, file, Options{Shard: Shard{i, 40}, OutDir: t.TempDir()})
		if err != nil {
			t.Fatalf("shard %d/40: %v", i, err)
		}
		if sum.Images == 0 {
			empty++
		}
		images += sum.Images
	}
	if empty < 38 || images != 2 {
		t.Errorf("40 shards over 2 inputs: %d empty, %d images in all; want at least 38 empty and 2 images", empty, images)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/1": {0, 1}, "3/4": {3, 4}, " 1 / 2 ": {1, 2}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, say := range map[string]string{
		"3/2":   "shard 3/2: want I/N with 0 ≤ I < N (N at least 1)",
		"2/2":   "shard 2/2: want I/N with 0 ≤ I < N",
		"0/0":   "shard 0/0: want I/N with 0 ≤ I < N (N at least 1)",
		"-1/4":  "shard -1/4: want I/N with 0 ≤ I < N",
		"a/b":   `shard "a/b": want I/N, two whole numbers with 0 ≤ I < N, such as 0/4`,
		"1":     `shard "1": want I/N`,
		"1/2/3": `shard "1/2/3": want I/N`,
	} {
		if _, err := ParseShard(in); err == nil || !strings.Contains(err.Error(), say) {
			t.Errorf("ParseShard(%q) = %v, want an error saying %q", in, err, say)
		}
	}
	h := runHost(t)
	spec, err := Load(setup(t, 1, 1, "stop", "", "gamma"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile(context.Background(), h, spec, Options{Shard: Shard{5, 2}}); err == nil || !strings.Contains(err.Error(), "Options.Shard: shard 5/2: want I/N with 0 ≤ I < N") {
		t.Errorf("Compile with shard 5/2: %v", err)
	}
}

// TestShardProcesses: three processes, one per shard, run at once over
// the same inputs into one output directory: between them they write
// every input's output exactly once, as one unsharded run does.
func TestShardProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	h := runHost(t, tripwire(1, slowOp()))
	file := setup(t, 17, 2, "stop", slowTrip, "trip")
	if _, _, err := compileRun(t, h, file, Options{}); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, filepath.Join(filepath.Dir(file), "out"))
	out := t.TempDir()
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+file, childShardEnv+"="+(Shard{i, 3}).String(), childOutEnv+"="+out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("shard %d/3: %v", i, err)
		}
	}
	if got := readAll(t, out); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("three shard processes wrote %v; one run writes %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	journals, _ := filepath.Glob(filepath.Join(out, ".dynop-journal-t-shard-*-of-3.jsonl"))
	if len(journals) != 3 {
		t.Fatalf("journals %v, want one per shard", journals)
	}
	ran := map[string]string{} // input -> the journal that ran it
	for _, j := range journals {
		data, err := os.ReadFile(j)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
			var e journalEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil || e.Status != "done" {
				t.Fatalf("%s: line %q: %v", j, line, err)
			}
			key := strings.Join(e.Input, ",")
			if other, dup := ran[key]; dup {
				t.Errorf("%s ran in two shards: %s and %s", key, other, j)
			}
			ran[key] = j
		}
	}
	if len(ran) != 17 {
		t.Errorf("the shards ran %d inputs, want each of the 17 once", len(ran))
	}
}
