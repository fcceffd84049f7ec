package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Random allocates a CPU batch as [Alloc] does and fills it from r:
// floating-point elements (float32 and float64) uniform in [0, 1),
// booleans 0 or 1, every other type random bits. Tests, self-checks and
// benchmarks use it to make inputs.
func Random(r *rand.Rand, dt DType, layout string, shapes [][]int64) (*Batch, error) {
	b, err := Alloc(dt, layout, shapes)
	if err != nil {
		return nil, err
	}
	for _, t := range b.Samples() {
		fillRandom(t.Span(), dt, r)
	}
	return b, nil
}

func fillRandom(data []byte, dt DType, r *rand.Rand) {
	switch {
	case dt == Float32:
		for i := 0; i+4 <= len(data); i += 4 {
			binary.NativeEndian.PutUint32(data[i:], math.Float32bits(r.Float32()))
		}
	case dt == Float64:
		for i := 0; i+8 <= len(data); i += 8 {
			binary.NativeEndian.PutUint64(data[i:], math.Float64bits(r.Float64()))
		}
	case dt.Code == Bool:
		for i := range data {
			data[i] = byte(r.IntN(2))
		}
	default:
		for i := 0; i < len(data); i += 8 {
			var w [8]byte
			binary.NativeEndian.PutUint64(w[:], r.Uint64())
			copy(data[i:], w[:])
		}
	}
}
