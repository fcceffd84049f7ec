package capi

/*
#define DYNOP_HOST_NO_PROTOTYPES
#include <dynop/dynop_host.h>
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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

func parsePipelineOptions(text string) (pipeline.Options, error) {
	var o pipelineOptions
	if text != "" {
		d := json.NewDecoder(bytes.NewReader([]byte(text)))
		d.DisallowUnknownFields()
		if err := d.Decode(&o); err != nil {
			return pipeline.Options{}, fmt.Errorf("%w: options_json: %v", errInvalid, err)
		}
	}
	return pipeline.Options{OutDir: o.OutDir, Inputs: o.Inputs, Workers: o.Workers, Atomic: o.Atomic, Resume: o.Resume}, nil
}

//export dynop_pipeline_run
func dynop_pipeline_run(hid C.uintptr_t, path, optionsJSON *C.char, summary **C.char) C.dynop_result {
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

// runPipeline loads, compiles and runs the pipeline file at path and
// returns its summary as JSON.
func (h *host) runPipeline(path, optionsJSON string) (_ []byte, err error) {
	defer guard(&err)
	opts, err := parsePipelineOptions(optionsJSON)
	if err != nil {
		return nil, err
	}
	spec, err := pipeline.Load(path)
	if err != nil {
		return nil, err
	}
	p, err := pipeline.Compile(context.Background(), h.h, spec, opts)
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
