package native

/*
#include <stdlib.h>
#include "loader.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dynop/dynop/abi"
	"runtime/cgo"
	"unsafe"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/internal/abihost"
	"github.com/dynop/dynop/internal/errdefs"
	"github.com/dynop/dynop/schema"
)

// dynopGoRegisterPass hands the code of a declared pass, which a plugin
// registers during register, to the host.
//
//export dynopGoRegisterPass
func dynopGoRegisterPass(h C.uintptr_t, cp *C.dynop_pass, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("register_pass", &rc, buf, n)
	s := sessionOf(h)
	if err := s.registerPass(cp); err != nil {
		return s.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

func (s *session) registerPass(cp *C.dynop_pass) error {
	ps, err := abihost.DecodePass(cMemory{}, addrOf(unsafe.Pointer(cp)))
	if err != nil {
		return fmt.Errorf("native: plugin %q: %w", s.p.info.ID, err)
	}
	desc, declared := s.p.info.Pass(ps.Name)
	if declared && ps.Run == 0 {
		return fmt.Errorf("native: plugin %q: register_pass %q: %w: run is NULL", s.p.info.ID, ps.Name, ErrABI)
	}
	// The host checks that the pass is declared (listing those that are)
	// and that register is running.
	return s.host.RegisterPass(ps.Name, &nativePass{sess: s, cp: cp, desc: desc})
}

// nativePass is a pass of a started native plugin. It implements every
// pass interface; the host calls the one of its declared kind.
type nativePass struct {
	sess *session
	cp   *C.dynop_pass
	desc schema.Pass
}

var (
	_ graph.PopulatePass  = (*nativePass)(nil)
	_ graph.PartitionPass = (*nativePass)(nil)
	_ graph.GlobalPass    = (*nativePass)(nil)
)

// Populate implements graph.PopulatePass.
func (p *nativePass) Populate(ctx context.Context, b *graph.Builder, n *graph.Node) error {
	return p.run(ctx, schema.Populate, b, n.Graph(), n)
}

// Partition implements graph.PartitionPass.
func (p *nativePass) Partition(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
	return p.run(ctx, schema.Partition, b, g, nil)
}

// Global implements graph.GlobalPass.
func (p *nativePass) Global(ctx context.Context, b *graph.Builder, g *graph.Graph) error {
	return p.run(ctx, schema.Global, b, g, nil)
}

// run lays g out in C memory and calls the plugin's run with it. It holds
// the plugin started for the call, like an operator call.
func (p *nativePass) run(ctx context.Context, kind schema.PassKind, b *graph.Builder, g *graph.Graph, node *graph.Node) error {
	id := p.sess.p.info.ID
	if kind != p.desc.Kind {
		return fmt.Errorf("native: plugin %q: pass %q is a %s pass; it cannot run as a %s pass", id, p.desc.Name, p.desc.Kind, kind)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.sess.enter(); err != nil {
		return fmt.Errorf("pass %q: %w", p.desc.Name, err)
	}
	defer p.sess.leave()
	_, outs := g.Outputs()
	r := &passRun{ctx: ctx, pass: p, b: b, nodes: g.Nodes(), outs: outs}
	if err := r.layout(node); err != nil {
		return fmt.Errorf("native: plugin %q: pass %q: %w", id, p.desc.Name, err)
	}
	defer r.free()
	h := cgo.NewHandle(r)
	defer h.Delete()
	rc := C.dynop_loader_pass_run(p.sess.who, p.cp, r.builder, C.uintptr_t(h), r.buf, errBufSize)
	if rc == C.DYNOP_OK {
		return nil
	}
	e := &abi.ResultError{Kind: "native", Plugin: id, Call: fmt.Sprintf("pass %q", p.desc.Name), Result: abi.Result(rc), Message: C.GoString(r.buf)}
	if r.lastErr != nil && (e.Message == "" || passResult(r.lastErr) == e.Result) {
		e.Cause = r.lastErr
	}
	return e
}

// passRun is one call of a pass's run: the graph as C sees it, and what
// the builder's functions need, reached through a cgo.Handle.
type passRun struct {
	ctx   context.Context
	pass  *nativePass
	b     *graph.Builder
	nodes []*graph.Node
	outs  []graph.Port // the graph's outputs

	block   unsafe.Pointer // C memory: the builder, the nodes, their inputs and strings
	builder *C.dynop_graph_builder
	cnodes  []C.dynop_graph_node // in block
	buf     *C.char              // in block: errBufSize bytes for run's message
	extra   []unsafe.Pointer     // C strings made during the run

	lastErr error // the last failure of a builder function
}

// layout writes the builder and the nodes into one block of C memory:
// one allocation however large the graph. node is the node to populate,
// or nil.
func (r *passRun) layout(node *graph.Node) error {
	index := make(map[*graph.Node]uint32, len(r.nodes))
	for i, n := range r.nodes {
		index[n] = uint32(i)
	}
	type nodeText struct {
		name, kind, def, args string
		hasDef, hasArgs       bool
		inputs                []graph.Port
	}
	per := make([]nodeText, len(r.nodes))
	align := func(n uintptr) uintptr { return (n + 7) &^ 7 }
	size := align(C.sizeof_dynop_graph_builder)
	nodesAt := size
	size += uintptr(len(r.nodes)) * C.sizeof_dynop_graph_node
	insAt := size
	for i, n := range r.nodes {
		s := &per[i]
		s.name, s.kind, s.inputs = n.Name(), n.Kind(), n.Inputs()
		if d := n.Definition(); d != nil {
			s.def, s.hasDef = d.Name(), true
		}
		s.args, s.hasArgs = argsJSON(n.Args)
		size += 2 * 4 * uintptr(len(s.inputs))
	}
	size += 2 * 4 * uintptr(len(r.outs))
	bufAt := size
	size += errBufSize
	strAt := size
	for _, s := range per {
		size += uintptr(len(s.name) + len(s.kind) + len(s.def) + len(s.args) + 4)
	}
	r.block = C.calloc(1, C.size_t(size))
	if r.block == nil {
		return errors.New("out of C memory for the graph")
	}
	r.builder = (*C.dynop_graph_builder)(r.block)
	r.buf = (*C.char)(unsafe.Add(r.block, bufAt))
	r.cnodes = unsafe.Slice((*C.dynop_graph_node)(unsafe.Add(r.block, nodesAt)), len(r.nodes))
	ins := unsafe.Slice((*C.uint32_t)(unsafe.Add(r.block, insAt)), (bufAt-insAt)/4)
	text := unsafe.Slice((*byte)(unsafe.Add(r.block, strAt)), size-strAt)
	str := func(s string) *C.char {
		p := (*C.char)(unsafe.Pointer(&text[0]))
		text = text[copy(text, s)+1:] // calloc wrote the NUL
		return p
	}
	for i := range r.nodes {
		s, cn := &per[i], &r.cnodes[i]
		cn.header = C.dynop_loader_graph_node_header
		cn.name, cn.kind = str(s.name), str(s.kind)
		if s.hasDef {
			cn.definition = str(s.def)
		}
		if s.hasArgs {
			cn.args_json = str(s.args)
		}
		k := len(s.inputs)
		cn.input_count = C.uint32_t(k)
		if k > 0 {
			from, outs := ins[:k], ins[k:2*k]
			ins = ins[2*k:]
			for j, p := range s.inputs {
				from[j], outs[j] = C.DYNOP_NO_NODE, C.uint32_t(p.Index)
				if x, ok := index[p.Node]; ok {
					from[j] = C.uint32_t(x)
				}
			}
			cn.inputs, cn.input_outputs = &from[0], &outs[0]
		}
	}
	if k := len(r.outs); k > 0 {
		from, outs := ins[:k], ins[k:2*k]
		for j, p := range r.outs {
			from[j], outs[j] = C.DYNOP_NO_NODE, C.uint32_t(p.Index)
			if x, ok := index[p.Node]; ok {
				from[j] = C.uint32_t(x)
			}
		}
		r.builder.output_count, r.builder.outputs, r.builder.output_outputs = C.uint32_t(k), &from[0], &outs[0]
	}
	r.builder.node_count = C.uint32_t(len(r.nodes))
	if len(r.nodes) > 0 {
		r.builder.nodes = &r.cnodes[0]
	}
	r.builder.node = C.DYNOP_NO_NODE
	if x, ok := index[node]; ok {
		r.builder.node = C.uint32_t(x)
	}
	return nil
}

// argsJSON returns a node's arguments as a JSON object, and false if they
// cannot be written as JSON.
func argsJSON(args schema.Args) (string, bool) {
	if len(args) == 0 {
		return "{}", true
	}
	j, err := json.Marshal(args)
	if err != nil {
		return "", false
	}
	return string(j), true
}

func (r *passRun) free() {
	for _, p := range r.extra {
		C.free(p)
	}
	C.free(r.block)
	r.block, r.builder, r.cnodes, r.buf, r.extra = nil, nil, nil, nil, nil
}

// callError is a builder function's failure with the result code it
// returns to C.
type callError struct {
	r   abi.Result
	err error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

func callErrorf(r abi.Result, format string, args ...any) error {
	return &callError{r, fmt.Errorf(format, args...)}
}

// passResult returns the result code that tells a pass about err.
func passResult(err error) abi.Result {
	var ce *callError
	switch {
	case errors.As(err, &ce):
		return ce.r
	case errors.Is(err, errdefs.ErrNotFound):
		return abi.ErrorNotFound
	case errors.Is(err, errdefs.ErrUnsupported):
		return abi.ErrorUnsupported
	case errors.Is(err, schema.ErrArgument), errors.Is(err, graph.ErrInvalid):
		return abi.ErrorInvalidArgument
	}
	if r := resultOf(err); r != abi.ErrorGeneric {
		return r
	}
	if errors.Is(err, schema.ErrPass) {
		return abi.ErrorInvalidArgument
	}
	return abi.ErrorGeneric
}

// fail records err as the run's last builder failure, writes its message
// into the calling thread's error buffer and returns its result code.
func (r *passRun) fail(err error, buf *C.char, n C.size_t) C.dynop_result {
	r.lastErr = err
	writeCString(buf, n, err.Error())
	return C.dynop_result(passResult(err))
}

func runOf(h C.uintptr_t) *passRun { return cgo.Handle(h).Value().(*passRun) }

// node returns node i of the view.
func (r *passRun) node(what string, i uint32) (*graph.Node, error) {
	if int64(i) >= int64(len(r.nodes)) {
		return nil, callErrorf(abi.ErrorInvalidArgument, "%s: node %d is out of range: the graph has %d node(s)", what, i, len(r.nodes))
	}
	return r.nodes[i], nil
}

//export dynopGoPassSetOperator
func dynopGoPassSetOperator(h C.uintptr_t, node C.uint32_t, name, args *C.char, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("set_operator", &rc, buf, n)
	r := runOf(h)
	if err := r.setOperator(uint32(node), goString(name), args); err != nil {
		return r.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

func (r *passRun) setOperator(i uint32, name string, cargs *C.char) error {
	what := fmt.Sprintf("set_operator(%d, %q)", i, name)
	n, err := r.node(what, i)
	if err != nil {
		return err
	}
	args := n.Args
	if cargs != nil {
		var v any
		text := goString(cargs)
		if err := abihost.DecodeJSON(text, &v); err != nil {
			return callErrorf(abi.ErrorInvalidArgument, "%s: args_json is not JSON: %v", what, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return callErrorf(abi.ErrorInvalidArgument, "%s: args_json %s is not a JSON object", what, text)
		}
		args = schema.Args(obj)
	}
	if err := r.b.SetOperator(r.ctx, n, name, args); err != nil {
		return fmt.Errorf("%s on node %q: %w", what, n.Name(), err)
	}
	// The view shows the definition attached.
	def := C.CString(n.Definition().Name())
	r.extra = append(r.extra, unsafe.Pointer(def))
	r.cnodes[i].definition = def
	return nil
}

//export dynopGoPassGroup
func dynopGoPassGroup(h C.uintptr_t, name *C.char, nodes *C.uint32_t, count C.uint32_t, buf *C.char, n C.size_t) (rc C.dynop_result) {
	defer catch("group", &rc, buf, n)
	r := runOf(h)
	if err := r.group(goString(name), nodes, uint32(count)); err != nil {
		return r.fail(err, buf, n)
	}
	return C.DYNOP_OK
}

func (r *passRun) group(name string, cnodes *C.uint32_t, count uint32) error {
	what := fmt.Sprintf("group(%q)", name)
	if k := r.pass.desc.Kind; k != schema.Partition {
		return callErrorf(abi.ErrorState, "%s: only partition passes group nodes; pass %q is a %s pass", what, r.pass.desc.Name, k)
	}
	if int64(count) > int64(len(r.nodes)) {
		return callErrorf(abi.ErrorInvalidArgument, "%s: %d nodes, but the graph has %d", what, count, len(r.nodes))
	}
	var members []*graph.Node
	if count > 0 {
		for _, i := range unsafe.Slice((*uint32)(unsafe.Pointer(cnodes)), count) {
			n, err := r.node(what, i)
			if err != nil {
				return err
			}
			members = append(members, n)
		}
	}
	if err := r.b.Group(name, members, nil); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
