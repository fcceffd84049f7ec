package pipeline

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzReadJournal: a journal file, which a run killed at any moment may
// have left cut short or which anything may have written, is read
// without panicking; what cannot be used is ErrJournal naming the file,
// and every input it returns as done has a "done" line.
func FuzzReadJournal(f *testing.F) {
	want := journalHeader{Format: journalFormat, Pipeline: "/p/t.yaml", SHA256: "ab"}
	head, _ := json.Marshal(want)
	f.Add(string(head) + "\n" + `{"input":["/p/in/a.png"],"status":"done"}` + "\n")
	f.Add(string(head) + "\n" + `{"input":["/p/in/a.png"],"outputs":["/nonexistent/a.png"],"status":"done"}` + "\n" + `{"input":["/p/in/b.png"],"status":"skipp`)
	f.Add(string(head) + "\n" + `{"input":["a"],"status":"done"}` + "\n" + `{"input":["a"],"status":"failed","error":"x"}` + "\n")
	f.Add(`{"journal":"dynop.run.journal/v1","pipeline":"/other.yaml"}` + "\n")
	f.Add("not json\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, data string) {
		done, err := readJournal("/j.jsonl", []byte(data), want)
		if err != nil {
			if !errors.Is(err, ErrJournal) || !strings.Contains(err.Error(), "/j.jsonl") {
				t.Fatalf("error %v does not wrap ErrJournal naming the file", err)
			}
			return
		}
		for key := range done {
			if !strings.Contains(data, `"done"`) {
				t.Fatalf("input %q is done in a journal with no done line", key)
			}
		}
	})
}
