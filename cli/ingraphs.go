package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/dynop/dynop"
	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/op"
	"github.com/dynop/dynop/schema"
)

// graphsEntry says what runs in graphs where an operator is named: the
// operator itself, or another that a populate pass puts in its place;
// and in whose place this operator runs. It is inspect's answer to
// "which runs, and why", found by building one-node graphs with the
// host's passes, as a pipeline would.
type graphsEntry struct {
	// Runs is the operator a graph node of this kind runs.
	Runs string `json:"runs"`
	// Pass is the populate pass that put Runs in its place, and Plugin
	// the plugin that provides it; empty when the operator runs itself.
	Pass   string `json:"pass,omitempty"`
	Plugin string `json:"plugin,omitempty"`
	// Why says it in a sentence.
	Why string `json:"why"`
	// Replaces lists the operators this one runs in place of.
	Replaces []replacement `json:"replaces,omitempty"`
}

// replacement is an operator that a pass replaces with the inspected one.
type replacement struct {
	Operator string `json:"operator"`
	Pass     string `json:"pass"`
	Plugin   string `json:"plugin,omitempty"`
}

// inGraphs finds what graphs run for the operator e: a trial build of a
// node of its kind, and of the kind of every populate pass its plugin
// provides, to see whether they end up running e.
func inGraphs(ctx context.Context, h *dynop.Host, e op.Entry) (graphsEntry, error) {
	name := e.Schema.Name
	passes := h.Passes().List()
	var matching []string
	for _, p := range passes {
		if p.Desc.Kind == schema.Populate && p.Desc.Match == name {
			matching = append(matching, p.Desc.Name)
		}
	}
	g := graphsEntry{Runs: name, Why: "no pass of the plugins found replaces it"}
	if len(matching) > 0 {
		runs, pass, err := trialBuild(ctx, h, name, e.Schema)
		switch {
		case err != nil:
			return graphsEntry{}, fmt.Errorf("the passes that match it (%s) decide from a node's arguments, and a node without any does not build: %w", joinAnd(matching), err)
		case runs != name:
			g.Runs, g.Pass, g.Plugin = runs, pass.Desc.Name, pass.Plugin
			g.Why = fmt.Sprintf("pass %s of %s %s; skipping the pass keeps %s", pass.Desc.Name, pluginOr(pass.Plugin), pass.Desc.Doc, name+" (dynop run --skip-pass "+pass.Desc.Name+")")
		default:
			g.Why = fmt.Sprintf("the passes that match it (%s) leave it in place", joinAnd(matching))
		}
	}
	for _, p := range passes {
		if p.Desc.Kind != schema.Populate || p.Desc.Match == name || p.Plugin != e.Plugin || p.Plugin == "" {
			continue
		}
		other, err := h.Operators().Lookup(p.Desc.Match)
		if err != nil {
			continue // the pass matches a node name, or an operator no plugin found provides
		}
		runs, by, err := trialBuild(ctx, h, p.Desc.Match, other.Schema)
		if err == nil && runs == name {
			g.Replaces = append(g.Replaces, replacement{Operator: p.Desc.Match, Pass: by.Desc.Name, Plugin: by.Plugin})
		}
	}
	return g, nil
}

func pluginOr(id string) string {
	if id == "" {
		return "the host"
	}
	return id
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// trialBuild builds a graph of one node of the given kind, its inputs
// those of schema s and no arguments, with the host's passes, and returns
// the operator the node runs and the populate pass that attached it (a
// zero entry when none did).
func trialBuild(ctx context.Context, h *dynop.Host, kind string, s schema.Op) (string, graph.PassEntry, error) {
	g := graph.New("inspect")
	defer g.Close()
	var ports []graph.Port
	for i := range len(s.Inputs) - s.OptionalInputs {
		in, err := g.AddInput(fmt.Sprintf("in%d", i))
		if err != nil {
			return "", graph.PassEntry{}, err
		}
		ports = append(ports, in.Out(0))
	}
	n, err := g.AddNode("node", kind, nil, ports...)
	if err != nil {
		return "", graph.PassEntry{}, err
	}
	for i := range s.Outputs {
		if err := g.AddOutput(fmt.Sprintf("out%d", i), n.Out(i)); err != nil {
			return "", graph.PassEntry{}, err
		}
	}
	rec := &passRecorder{}
	opts := graph.BuildOptions{Passes: h.Passes(), Operators: h.Operators(), Default: graph.OperatorPopulate(), Logger: slog.New(rec)}
	if err := graph.Build(ctx, g, opts); err != nil {
		return "", graph.PassEntry{}, fmt.Errorf("building a graph of one %s node: %w", kind, err)
	}
	def := n.Definition()
	if def == nil {
		return "", graph.PassEntry{}, fmt.Errorf("building a graph of one %s node: nothing attached", kind)
	}
	var by graph.PassEntry
	if last := rec.last(); last != "" && def.Name() != kind {
		for _, p := range h.Passes().List() {
			if p.Desc.Name == last {
				by = p
			}
		}
	}
	return def.Name(), by, nil
}

// passRecorder is a slog handler that keeps the name of the last
// populate pass graph.Build ran: once a pass attaches a definition to a
// node, no other runs on it, so in a one-node graph the last is the one
// that attached it.
type passRecorder struct {
	mu   sync.Mutex
	pass string
}

func (r *passRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *passRecorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "populate pass" {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "pass" {
			r.mu.Lock()
			r.pass = a.Value.String()
			r.mu.Unlock()
			return false
		}
		return true
	})
	return nil
}

func (r *passRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *passRecorder) WithGroup(string) slog.Handler      { return r }

func (r *passRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pass
}
