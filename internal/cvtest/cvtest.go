// Package cvtest runs OpenCV, through Debian's python3-opencv, for tests
// that compare operators with it. Arrays cross as raw files in C order
// with their dtype and shape; the Python code sees them as NumPy arrays.
package cvtest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynop/dynop/tensor"
)

// Python is the interpreter Debian's python3-opencv installs for.
const Python = "/usr/bin/python3"

// Require skips t unless [Python] imports cv2.
func Require(t testing.TB) {
	t.Helper()
	if exec.Command(Python, "-c", "import cv2").Run() != nil {
		t.Skip("no python3 imports cv2 (apt-get install python3-opencv)")
	}
}

// Array is a C-ordered array crossing to or from Python: DType is a
// NumPy dtype name ("uint8", "float32", "float16", ...).
type Array struct {
	DType string
	Shape []int64
	Data  []byte
}

// FromTensor returns the elements of t, which may be strided, as an
// Array in C order.
func FromTensor(t testing.TB, x *tensor.Tensor) Array {
	t.Helper()
	data, err := x.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return Array{DType: x.DType().String(), Shape: x.Shape(), Data: data}
}

// Tensor returns a as a compact tensor with the given layout.
func (a Array) Tensor(t testing.TB, layout string) *tensor.Tensor {
	t.Helper()
	dt, err := tensor.ParseDType(a.DType)
	if err != nil {
		t.Fatal(err)
	}
	x, err := tensor.New(dt, a.Shape...)
	if err != nil {
		t.Fatal(err)
	}
	if layout != "" {
		if x, err = x.WithLayout(layout); err != nil {
			t.Fatal(err)
		}
	}
	copy(x.Span(), a.Data)
	return x
}

// Run runs the Python code with cv2 and np imported and the list inputs
// holding in as NumPy arrays; the code assigns a list of arrays to
// outputs, which Run returns in C order. It skips t without OpenCV and
// fails it, with Python's output, if the code raises.
func Run(t testing.TB, code string, in ...Array) []Array {
	t.Helper()
	Require(t)
	dir := t.TempDir()
	var pre strings.Builder
	pre.WriteString("import cv2, json, numpy as np\ninputs = []\n")
	for i, a := range in {
		path := filepath.Join(dir, fmt.Sprintf("in%d.raw", i))
		if err := os.WriteFile(path, a.Data, 0o600); err != nil {
			t.Fatal(err)
		}
		shape := make([]string, len(a.Shape))
		for j, n := range a.Shape {
			shape[j] = fmt.Sprint(n)
		}
		fmt.Fprintf(&pre, "inputs.append(np.fromfile(%q, dtype=np.%s).reshape((%s,)))\n", path, a.DType, strings.Join(shape, ","))
	}
	meta := filepath.Join(dir, "outputs.json")
	post := fmt.Sprintf(`
_meta = []
for _i, _o in enumerate(outputs):
    _o = np.ascontiguousarray(_o)
    _o.tofile(%q + "/out%%d.raw" %% _i)
    _meta.append({"DType": str(_o.dtype), "Shape": list(_o.shape)})
with open(%q, "w") as _f:
    json.dump(_meta, _f)
`, dir, meta)
	script := pre.String() + code + "\n" + post
	if out, err := exec.Command(Python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("OpenCV: %v\n%s\n%s", err, out, code)
	}
	raw, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var outs []Array
	if err := json.Unmarshal(raw, &outs); err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		if outs[i].Data, err = os.ReadFile(filepath.Join(dir, fmt.Sprintf("out%d.raw", i))); err != nil {
			t.Fatal(err)
		}
	}
	return outs
}
