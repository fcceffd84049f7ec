package abihost

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dynop/dynop/iface"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/internal/testutil"
	"github.com/dynop/dynop/schema"
	"github.com/dynop/dynop/tensor"
)

// sampleInfo uses every member the decoder reads.
func sampleInfo() schema.Plugin {
	text := iface.Desc{UID: iface.MustParseUID("5B1E0C3A-2F64-4B7E-9D1A-8C3F2E6A4B10"), Name: "dynop.example.Text", Version: iface.V(1, 1, 0)}
	return schema.Plugin{
		ID: "acme.plugin.sample", Version: iface.V(1, 2, 3), APIVersion: schema.APIVersion,
		Description: "A sample.", Author: "Acme", Build: "abc123",
		Interfaces: []iface.Desc{text},
		Needs:      []schema.Need{{Plugin: "dynop.plugin.text", Interface: text}},
		Requirements: schema.Requirements{OS: []string{"linux", "darwin"}, MinOSVersion: iface.V(5, 4, 0), Arch: []string{"amd64"},
			CPUFeatures: []string{"avx2"}, GPU: &schema.GPURequirements{Vendor: "nvidia", MinArch: iface.V(8, 0, 0), MinDriver: iface.V(535, 0, 0)},
			Libraries: []string{"libm.so.6", "libcuda.so.1"}},
		Operators: []schema.Op{{
			Name: "acme.Blur", Doc: "Blurs.", Devices: []schema.Device{schema.CPU},
			Inputs: []schema.Input{{Name: "images", Doc: "in", DTypes: []tensor.DType{tensor.Uint8, tensor.Float32}, Layouts: []string{"HWC"}, NDim: 3, Channels: []int{1, 3, 4}},
				{Name: "mask", DTypes: []tensor.DType{tensor.Uint8}}},
			OptionalInputs: 1,
			Outputs: []schema.Output{{Name: "out", Doc: "blurred", Layout: "HWC", Like: "images", Channels: schema.ChannelsLike},
				{Name: "gray", Layout: "HWC", Channels: 1}, {Name: "chosen", Layout: "HWC", ChannelsArg: "big"}},
			Args: []schema.Arg{
				{Name: "sigma", Doc: "how much", Type: schema.Float, Required: true, Min: schema.Bounds(0), MinExclusive: true, Max: schema.Bounds(100)},
				{Name: "mode", Type: schema.String, Default: "reflect", Allowed: []any{"reflect", "clamp"}, Deprecated: []string{"border"}},
				{Name: "size", Type: schema.IntList, Default: []int64{3, 3}},
				{Name: "big", Type: schema.Int, Default: int64(1) << 60},
			},
		}, {Name: "acme.Nothing", Devices: []schema.Device{schema.CPU}}},
		Passes: []schema.Pass{{Name: "acme.fuse", Kind: schema.Populate, Match: "acme.Blur", Priority: -3, Doc: "Fuses."},
			{Name: "acme.global", Kind: schema.Global}},
	}
}

func place(t testing.TB, info schema.Plugin, ptr uint32, base uint64) (Bytes, uint64) {
	t.Helper()
	im := NewImage(ptr)
	at, err := im.EncodeInfo(info, 7)
	if err != nil {
		t.Fatal(err)
	}
	return Bytes{B: im.Place(base), Base: base, Ptr: ptr}, base + uint64(at)
}

// TestRoundTrip: what the encoder lays out, for either pointer size, the
// decoder reads back as the same info.
func TestRoundTrip(t *testing.T) {
	for _, ptr := range []uint32{4, 8} {
		for _, info := range []schema.Plugin{sampleInfo(), {ID: "acme.plugin.bare", Version: iface.V(0, 1, 0), APIVersion: schema.APIVersion}} {
			if err := info.Validate(); err != nil {
				t.Fatal(err)
			}
			m, at := place(t, info, ptr, 0x10000)
			got, flags, err := DecodeInfo(m, at)
			if err != nil {
				t.Fatalf("pointers of %d bytes: %v", ptr, err)
			}
			if d := info.Diff(got); d != "" || flags != 7 {
				t.Errorf("pointers of %d bytes: decoded info differs: %s (flags %d)", ptr, d, flags)
			}
		}
	}
}

// TestDecodeErrors: each kind of breach gets an error that says what is
// wrong, wrapping ErrABI (or schema.ErrPlugin for a well-formed info
// that breaks the info's rules).
func TestDecodeErrors(t *testing.T) {
	info := sampleInfo()
	for _, tc := range []struct {
		name   string
		mutate func(m Bytes, at uint64) uint64
		want   error
		text   string
	}{
		{"null", func(Bytes, uint64) uint64 { return 0 }, errdefs.ErrABI, "plugin info (get_info's result) is NULL"},
		{"outside", func(m Bytes, _ uint64) uint64 { return m.Base + uint64(len(m.B)) + 64 }, errdefs.ErrABI, "lies outside the plugin's memory"},
		{"type", func(m Bytes, at uint64) uint64 { m.B[at-m.Base] ^= 0xFF; return at }, errdefs.ErrABI, "plugin info (get_info's result) has type UID"},
		{"future", func(m Bytes, at uint64) uint64 { le.PutUint32(m.B[at-m.Base+16:], 2); return at }, errdefs.ErrABI, "from the future"},
		{"small", func(m Bytes, at uint64) uint64 { le.PutUint32(m.B[at-m.Base+28:], 40); return at }, errdefs.ErrABI, "says it is 40 bytes, but its version 1.2.0 needs at least"},
		{"huge", func(m Bytes, at uint64) uint64 { le.PutUint32(m.B[at-m.Base+28:], 1<<30); return at }, errdefs.ErrABI, "more than the 4096 any ABI struct may be"},
		{"count", func(m Bytes, at uint64) uint64 {
			le.PutUint32(m.B[at-m.Base+uint64(layouts32.info.off[infoInterfaceCount]):], 5000)
			return at
		}, errdefs.ErrABI, "interfaces has count 5000, more than 4096"},
		{"count past memory", func(m Bytes, at uint64) uint64 {
			le.PutUint32(m.B[at-m.Base+uint64(layouts32.info.off[infoInterfaceCount]):], 4000)
			return at
		}, errdefs.ErrABI, "interfaces at 0x"},
		{"null id", func(m Bytes, at uint64) uint64 {
			le.PutUint32(m.B[at-m.Base+uint64(layouts32.info.off[infoID]):], 0)
			return at
		}, errdefs.ErrABI, "plugin info: id is NULL"},
		{"id without NUL", func(m Bytes, at uint64) uint64 {
			end := uint64(len(m.B))
			copy(m.B[end-3:], "xxx") // to the end of memory, no NUL
			le.PutUint32(m.B[at-m.Base+uint64(layouts32.info.off[infoID]):], uint32(m.Base+end-3))
			return at
		}, errdefs.ErrABI, "plugin info: id is longer than 65536 bytes, or not NUL-terminated"},
		{"api version", func(m Bytes, at uint64) uint64 {
			clear(m.B[at-m.Base+uint64(layouts32.info.off[infoAPIVersion]):][:12])
			return at
		}, errdefs.ErrABI, `plugin "acme.plugin.sample": api_version is 0.0.0`},
		{"invalid id", func(m Bytes, at uint64) uint64 {
			id := le.Uint32(m.B[at-m.Base+uint64(layouts32.info.off[infoID]):])
			m.B[uint64(id)-m.Base] = 'A'
			return at
		}, schema.ErrPlugin, "invalid info: invalid plugin info: plugin id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, at := place(t, info, 4, 0x1000)
			_, _, err := DecodeInfo(m, tc.mutate(m, at))
			if !errors.Is(err, tc.want) || !strings.Contains(fmtErr(err), tc.text) {
				t.Errorf("error %v, want one wrapping %v that says %q", err, tc.want, tc.text)
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// FuzzDecodeInfo reads infos from arbitrary memory: the first byte picks
// the pointer size, the next four the info's offset, the rest is memory
// at 0x1000. The decoder neither panics nor reads outside the memory; an
// error wraps ErrABI or schema.ErrPlugin; an info it accepts validates
// and survives an encoding round trip.
func FuzzDecodeInfo(f *testing.F) {
	for _, ptr := range []uint32{4, 8} {
		m, at := place(f, sampleInfo(), ptr, 0x1000)
		hdr := []byte{byte(ptr), 0, 0, 0, 0}
		le.PutUint32(hdr[1:], uint32(at-m.Base))
		f.Add(append(hdr, m.B...))
	}
	for _, ptr := range []uint32{4, 8} {
		im := NewImage(ptr)
		at := im.EncodeOperator("acme.Blur", schema.CPU, 1)
		hdr := []byte{byte(ptr), 0, 0, 0, 0}
		le.PutUint32(hdr[1:], at)
		f.Add(append(hdr, im.Place(0x1000)...))
	}
	f.Add([]byte{4, 8, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		ptr := uint32(4)
		if data[0]&1 == 0 {
			ptr = 8
		}
		m := Bytes{B: data[5:], Base: 0x1000, Ptr: ptr}
		at := 0x1000 + uint64(le.Uint32(data[1:]))
		// The other structs a plugin hands the host, read from the same
		// memory: errors wrap ErrABI, and nothing panics.
		if _, err := DecodeOperator(m, at); err != nil && !errors.Is(err, errdefs.ErrABI) {
			t.Errorf("DecodeOperator: %v does not wrap ErrABI", err)
		}
		if _, err := DecodeVariants(m, "variants", at, uint32(data[1])%8); err != nil && !errors.Is(err, errdefs.ErrABI) {
			t.Errorf("DecodeVariants: %v does not wrap ErrABI", err)
		}
		if _, err := DecodePass(m, at); err != nil && !errors.Is(err, errdefs.ErrABI) {
			t.Errorf("DecodePass: %v does not wrap ErrABI", err)
		}
		info, flags, err := DecodeInfo(m, at)
		if err != nil {
			if !errors.Is(err, errdefs.ErrABI) && !errors.Is(err, schema.ErrPlugin) {
				t.Errorf("error %v wraps neither ErrABI nor schema.ErrPlugin", err)
			}
			return
		}
		if err := info.Validate(); err != nil {
			t.Errorf("accepted an invalid info: %v", err)
		}
		im := NewImage(ptr)
		infoAt, err := im.EncodeInfo(info, flags)
		if err != nil {
			t.Fatalf("EncodeInfo of an info the decoder accepted: %v", err)
		}
		again, flags2, err := DecodeInfo(Bytes{B: im.Place(0x1000), Base: 0x1000, Ptr: ptr}, 0x1000+uint64(infoAt))
		if err != nil {
			t.Fatalf("the info's own encoding does not decode: %v", err)
		}
		if d := info.Diff(again); d != "" || flags != flags2 {
			t.Errorf("decoded again, it differs: %s", d)
		}
	})
}

// TestOlderMinorVersions: structs of an older minor version, which end
// before the members added since, still read: an info 1.0 (before
// operators) and 1.1 (before passes), requirements 1.0 (before
// libraries), an operator 1.0 (before variants).
func TestOlderMinorVersions(t *testing.T) {
	for _, ptr := range []uint32{4, 8} {
		l := layoutsFor(ptr)
		for _, tc := range []struct {
			minor             uint32
			end               uint32
			operators, passes int
		}{
			{0, l.info.end[infoRequirements], 0, 0},
			{1, l.info.end[infoOperators], 2, 0},
			{2, l.info.end[infoPasses], 2, 2},
		} {
			m, at := place(t, sampleInfo(), ptr, 0x1000)
			h := m.B[at-m.Base:]
			le.PutUint32(h[20:], tc.minor)
			le.PutUint32(h[28:], tc.end)
			info, _, err := DecodeInfo(m, at)
			if err != nil {
				t.Fatalf("info 1.%d, %d-byte pointers: %v", tc.minor, ptr, err)
			}
			if len(info.Operators) != tc.operators || len(info.Passes) != tc.passes || len(info.Interfaces) != 1 {
				t.Errorf("info 1.%d, %d-byte pointers: %d operators, %d passes, %d interfaces", tc.minor, ptr, len(info.Operators), len(info.Passes), len(info.Interfaces))
			}
		}
		// Requirements 1.0, before libraries: a plugin built against the
		// previous dynop.h.
		m, infoAt := place(t, sampleInfo(), ptr, 0x1000)
		h := m.B[infoAt-m.Base:]
		req := uint64(le.Uint32(h[l.info.off[infoRequirements]:]))
		if ptr == 8 {
			req = le.Uint64(h[l.info.off[infoRequirements]:])
		}
		rh := m.B[req-m.Base:]
		le.PutUint32(rh[20:], 0)
		le.PutUint32(rh[28:], l.requirements.end[reqGPUMinDriver])
		if info, _, err := DecodeInfo(m, infoAt); err != nil || info.Requirements.Libraries != nil || len(info.Requirements.CPUFeatures) != 1 {
			t.Errorf("requirements 1.0, %d-byte pointers: %+v, %v", ptr, info.Requirements, err)
		}
		im := NewImage(ptr)
		at := im.EncodeOperator("acme.Blur", schema.CPU, 1)
		b := im.Place(0x1000)
		le.PutUint32(b[at+20:], 0)                               // version 1.0
		le.PutUint32(b[at+28:], l.operator.end[operatorDestroy]) // ends before variants
		o, err := DecodeOperator(Bytes{B: b, Base: 0x1000, Ptr: ptr}, 0x1000+uint64(at))
		if err != nil || o.Variants != nil || o.Run == 0 || o.Name != "acme.Blur" {
			t.Errorf("operator 1.0, %d-byte pointers: %+v, %v", ptr, o, err)
		}
	}
}

// TestOperatorFlags: an operator 1.2's flags are read, a bit this host
// does not know is refused, and an operator 1.1, which ends before them,
// has none whatever its memory holds after its end.
func TestOperatorFlags(t *testing.T) {
	for _, ptr := range []uint32{4, 8} {
		l := layoutsFor(ptr)
		for _, tc := range []struct {
			minor, end, flags uint32
			scratch           bool
			err               string
		}{
			{2, l.operator.end[operatorFlags], OperatorScratch, true, ""},
			{2, l.operator.end[operatorFlags], 0, false, ""},
			{2, l.operator.end[operatorFlags], OperatorScratch | 4, false, "flags 0x5 has bits this host does not know (0x4)"},
			{1, l.operator.end[operatorVariants], OperatorScratch | 4, false, ""},
		} {
			im := NewImage(ptr)
			at := im.EncodeOperator("acme.Blur", schema.CPU, 1)
			b := im.Place(0x1000)
			le.PutUint32(b[at+20:], tc.minor)
			le.PutUint32(b[at+28:], tc.end)
			le.PutUint32(b[at+l.operator.off[operatorFlags]:], tc.flags)
			o, err := DecodeOperator(Bytes{B: b, Base: 0x1000, Ptr: ptr}, 0x1000+uint64(at))
			if tc.err != "" {
				testutil.WantErr(t, err, errdefs.ErrABI, tc.err)
				continue
			}
			if err != nil || o.Scratch() != tc.scratch {
				t.Errorf("operator 1.%d with flags %#x, %d-byte pointers: scratch %v, %v; want %v", tc.minor, tc.flags, ptr, o.Scratch(), err, tc.scratch)
			}
		}
	}
}

// TestBadChannels: an input whose channels list holds what is not a
// positive count is refused, naming the operator, the input and the
// value.
func TestBadChannels(t *testing.T) {
	for _, bad := range [][]int{{0, 3}, {-2}} {
		info := sampleInfo()
		info.Operators[0].Inputs[0].Channels = bad
		m, at := place(t, info, 8, 0x1000)
		_, _, err := DecodeInfo(m, at)
		want := fmt.Sprintf(`operator "acme.Blur" input 0: channels: "%d" is not a positive count`, bad[0])
		if !errors.Is(err, errdefs.ErrABI) || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("channels %v: %v, want %q", bad, err, want)
		}
	}
}
