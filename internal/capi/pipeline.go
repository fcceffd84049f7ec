package capi

/*
#define DYNOP_HOST_NO_PROTOTYPES
#include <dynop/dynop_host.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"unsafe"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/pipeline"
)

// pipelineOptions are the options_json of dynop_pipeline_run.
type pipelineOptions struct {
	OutDir  string              `json:"out_dir"`
	Inputs  map[string][]string `json:"inputs"`
	Workers int                 `json:"workers"`
	Atomic  bool                `json:"atomic"`
	Resume  bool                `json:"resume"`
}

// decodeOptions decodes an options_json object into v, refusing fields v
// does not have and anything after the object; "" leaves v as it is.
func decodeOptions(text string, v any) error {
	if text == "" {
		return nil
	}
	if !strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "{") {
		return fmt.Errorf("%w: options_json is not a JSON object", errInvalid)
	}
	d := json.NewDecoder(strings.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: options_json: %v", errInvalid, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return fmt.Errorf("%w: options_json: more after the JSON object", errInvalid)
	}
	return nil
}

func parsePipelineOptions(text string) (pipeline.Options, error) {
	var o pipelineOptions
	if err := decodeOptions(text, &o); err != nil {
		return pipeline.Options{}, err
	}
	return pipeline.Options{OutDir: o.OutDir, Inputs: o.Inputs, Workers: o.Workers, Atomic: o.Atomic, Resume: o.Resume}, nil
}

//export dynop_pipeline_run
func dynop_pipeline_run(hid C.uintptr_t, path, optionsJSON *C.char, summary **C.char) (rc C.dynop_result) {
	defer recoverExport("dynop_pipeline_run", &rc)
	begin()
	if summary != nil {
		*summary = nil
	}
	h, err := getHost(uintptr(hid))
	if err == nil && path == nil {
		err = fmt.Errorf("%w: path is NULL", errInvalid)
	}
	if err != nil {
		return fail("dynop_pipeline_run", err)
	}
	sum, err := h.runPipeline(C.GoString(path), goString(optionsJSON))
	if err != nil {
		return fail("dynop_pipeline_run", err)
	}
	if summary != nil {
		*summary = C.CString(string(sum))
	}
	return C.DYNOP_OK
}

// compile loads the pipeline file at path and compiles it with the
// host's plugins.
func (h *host) compile(path string, opts pipeline.Options) (*pipeline.Pipeline, error) {
	spec, err := pipeline.Load(path)
	if err != nil {
		return nil, err
	}
	return pipeline.Compile(context.Background(), h.h, spec, opts)
}

// runPipeline loads, compiles and runs the pipeline file at path and
// returns its summary as JSON.
func (h *host) runPipeline(path, optionsJSON string) (_ []byte, err error) {
	defer guard(&err)
	if err := h.enter(); err != nil {
		return nil, err
	}
	defer h.leave()
	opts, err := parsePipelineOptions(optionsJSON)
	if err != nil {
		return nil, err
	}
	p, err := h.compile(path, opts)
	if err != nil {
		return nil, err
	}
	sum, err := p.Run(context.Background())
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(sum)
}

// iterOptions are the options_json of dynop_pipeline_open: those of
// dynop_pipeline_run that do not concern written outputs.
type iterOptions struct {
	Inputs  map[string][]string `json:"inputs"`
	Workers int                 `json:"workers"`
}

func parseIterOptions(text string) (pipeline.Options, error) {
	var o iterOptions
	if err := decodeOptions(text, &o); err != nil {
		return pipeline.Options{}, fmt.Errorf("%w (dynop_pipeline_open takes \"inputs\" and \"workers\")", err)
	}
	return pipeline.Options{Inputs: o.Inputs, Workers: o.Workers, Tensors: true}, nil
}

// pipe is a pipeline open for iteration: its batches are pulled one by
// one by dynop_pipeline_next.
type pipe struct {
	tracked
	p    *pipeline.Pipeline
	info []byte // dynop_pipeline_open's info_json

	mu   sync.Mutex // one dynop_pipeline_next at a time, as iter.Pull requires
	next func() (pipeline.Step, error, bool)
	stop func()
	done bool // closed, or at the end
}

// pipelineInfo is dynop_pipeline_open's info_json.
type pipelineInfo struct {
	Name      string   `json:"name"`
	File      string   `json:"file"`
	BatchSize int      `json:"batch_size"`
	Inputs    []string `json:"inputs"`
	Outputs   []string `json:"outputs"`
	Samples   int      `json:"samples"`
}

//export dynop_pipeline_open
func dynop_pipeline_open(hid C.uintptr_t, path, optionsJSON *C.char, out *C.uintptr_t, infoJSON **C.char) (rc C.dynop_result) {
	defer recoverExport("dynop_pipeline_open", &rc)
	begin()
	if infoJSON != nil {
		*infoJSON = nil
	}
	h, err := getHost(uintptr(hid))
	switch {
	case err != nil:
	case path == nil:
		err = fmt.Errorf("%w: path is NULL", errInvalid)
	case out == nil:
		err = fmt.Errorf("%w: pipeline is NULL", errInvalid)
	}
	if err != nil {
		return fail("dynop_pipeline_open", err)
	}
	p, err := h.openPipeline(C.GoString(path), goString(optionsJSON))
	if err != nil {
		return fail("dynop_pipeline_open", err)
	}
	*out = C.uintptr_t(p.id)
	if infoJSON != nil {
		*infoJSON = C.CString(string(p.info))
	}
	return C.DYNOP_OK
}

// openPipeline compiles the pipeline file at path for iteration.
func (h *host) openPipeline(path, optionsJSON string) (_ *pipe, err error) {
	defer guard(&err)
	if err := h.enter(); err != nil {
		return nil, err
	}
	defer h.leave()
	opts, err := parseIterOptions(optionsJSON)
	if err != nil {
		return nil, err
	}
	p, err := h.compile(path, opts)
	if err != nil {
		return nil, err
	}
	spec := p.Spec()
	info, err := json.Marshal(pipelineInfo{Name: p.Graph().Name(), File: path, BatchSize: spec.BatchSize(),
		Inputs: spec.Inputs(), Outputs: spec.Outputs(), Samples: p.Samples()})
	if err != nil {
		return nil, errors.Join(err, p.Close())
	}
	next, stop := iter.Pull2(p.Batches(context.Background()))
	pp := &pipe{p: p, info: info, next: next, stop: stop}
	if _, err := h.track(kindPipeline, pp); err != nil {
		return nil, err
	}
	return pp, nil
}

//export dynop_pipeline_next
func dynop_pipeline_next(pid C.uintptr_t, outputs **C.DLManagedTensorVersioned, capacity C.size_t, count *C.uint32_t, filesJSON **C.char) (rc C.dynop_result) {
	defer recoverExport("dynop_pipeline_next", &rc)
	begin()
	if count != nil {
		*count = 0
	}
	if filesJSON != nil {
		*filesJSON = nil
	}
	v, err := table.get(uintptr(pid), kindPipeline)
	if err != nil {
		return fail("dynop_pipeline_next", err)
	}
	p := v.(*pipe)
	need := len(p.p.Spec().Outputs()) * p.p.Spec().BatchSize()
	switch {
	case count == nil:
		err = fmt.Errorf("%w: count is NULL", errInvalid)
	case outputs == nil:
		err = fmt.Errorf("%w: outputs is NULL", errInvalid)
	case int(capacity) < need:
		err = fmt.Errorf("%w: outputs has room for %d tensors; a batch of this pipeline may have %d (%d outputs x batch_size %d)",
			errInvalid, capacity, need, len(p.p.Spec().Outputs()), p.p.Spec().BatchSize())
	}
	if err != nil {
		return fail("dynop_pipeline_next", err)
	}
	outs := unsafe.Slice(outputs, need)
	clear(outs)
	n, files, err := p.pull(outs)
	if err != nil {
		return fail("dynop_pipeline_next", err)
	}
	*count = C.uint32_t(n)
	if filesJSON != nil && n > 0 {
		*filesJSON = C.CString(string(files))
	}
	return C.DYNOP_OK
}

// pull runs the next batch and puts its samples in outs, output o's
// sample s at o*n+s, as views of the pipeline's tensors; it returns n, 0
// at the end, and the samples' files as JSON.
func (p *pipe) pull(outs []*C.DLManagedTensorVersioned) (n int, files []byte, err error) {
	defer guard(&err)
	defer func() {
		if err != nil && len(outs) > 0 {
			C.dynop_capi_free_outputs(&outs[0], C.size_t(len(outs)))
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		if p.stop == nil {
			return 0, nil, fmt.Errorf("the pipeline is %w", dynop.ErrClosed)
		}
		return 0, nil, nil
	}
	step, err, ok := p.next()
	if !ok || err != nil {
		p.done = true
		return 0, nil, err
	}
	n = step.Outputs[0].Len()
	for o, b := range step.Outputs {
		for s := range n {
			if outs[o*n+s], err = exportView(b.Sample(s)); err != nil {
				return 0, nil, fmt.Errorf("output %q sample %d: %w", p.p.Spec().Outputs()[o], s, err)
			}
		}
	}
	files, err = json.Marshal(step.Files)
	return n, files, err
}

//export dynop_pipeline_close
func dynop_pipeline_close(pid C.uintptr_t) (rc C.dynop_result) {
	defer recoverExport("dynop_pipeline_close", &rc)
	begin()
	return closeHandle("dynop_pipeline_close", uintptr(pid), kindPipeline)
}

// close stops the iteration, after the call in flight, and closes the
// pipeline. The tensors it handed out stay valid.
func (p *pipe) close() (err error) {
	defer guard(&err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop == nil {
		return nil
	}
	p.stop()
	p.stop, p.done = nil, true
	return p.p.Close()
}
