package graph_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dynop/dynop/graph"
	"github.com/dynop/dynop/tensor"
)

const benchNodes = 10000

var empty = graph.Func("empty", func(context.Context, []*tensor.Batch) ([]*tensor.Batch, error) { return nil, nil })

// emptyGraph builds benchNodes empty nodes after a source node: wide
// (all after the source) or a chain (each after the previous).
func emptyGraph(b *testing.B, wide bool) *graph.Graph {
	g := graph.New("bench")
	src, _ := g.AddNode("src", "empty", nil)
	prev := src
	for i := range benchNodes {
		n, err := g.AddNode(fmt.Sprint(i), "empty", nil)
		if err != nil {
			b.Fatal(err)
		}
		if wide {
			g.AddOrder(src, n)
		} else {
			g.AddOrder(prev, n)
		}
		prev = n
	}
	err := graph.Build(context.Background(), g, graph.BuildOptions{Default: graph.PopulateFunc(
		func(ctx context.Context, b *graph.Builder, n *graph.Node) error { return b.SetDefinition(n, empty) })})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func nodesPerSecond(b *testing.B, n int) {
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "nodes/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkExecutor compares the executors with one goroutine per node
// and a WaitGroup (the reference), on a wide graph and on a chain of
// 10,000 empty nodes. The DESIGN target: at least 4 M nodes/s on the
// wide graph with 2 cores.
func BenchmarkExecutor(b *testing.B) {
	for _, shape := range []string{"wide", "chain"} {
		wide := shape == "wide"
		for _, c := range []struct {
			name string
			exec graph.Executor
		}{{"parallel", graph.Parallel{}}, {"parallel-1", graph.Parallel{Workers: 1}}, {"serial", graph.Serial{}}} {
			b.Run(shape+"/"+c.name, func(b *testing.B) {
				g := emptyGraph(b, wide)
				defer g.Close()
				g.Executor = c.exec
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := g.Execute(ctx); err != nil {
						b.Fatal(err)
					}
				}
				nodesPerSecond(b, benchNodes+1)
			})
		}
		b.Run(shape+"/goroutine-per-node", func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if wide {
					goroutinesWide(ctx)
				} else {
					goroutinesChain(ctx)
				}
			}
			nodesPerSecond(b, benchNodes+1)
		})
	}
}

// BenchmarkExecutorVsGoroutines times, in each iteration, the parallel
// executor and one goroutine per node on the same wide and chain graphs
// and reports the ratio of their node rates: the DESIGN target compares
// them in the same run (and wants ≥ 4 M nodes/s for the wide graph).
func BenchmarkExecutorVsGoroutines(b *testing.B) {
	for _, shape := range []string{"wide", "chain"} {
		b.Run(shape, func(b *testing.B) {
			wide := shape == "wide"
			g := emptyGraph(b, wide)
			defer g.Close()
			g.Executor = graph.Parallel{}
			ctx := context.Background()
			var ours, theirs time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := g.Execute(ctx); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if wide {
					goroutinesWide(ctx)
				} else {
					goroutinesChain(ctx)
				}
				ours, theirs = ours+mid.Sub(start), theirs+time.Since(mid)
			}
			nodes := float64(benchNodes+1) * float64(b.N)
			b.ReportMetric(nodes/ours.Seconds(), "nodes/s")
			b.ReportMetric(nodes/theirs.Seconds(), "goroutine-nodes/s")
			b.ReportMetric(theirs.Seconds()/ours.Seconds(), "x-faster")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func goroutinesWide(ctx context.Context) {
	empty.Execute(ctx, nil) // the source
	var wg sync.WaitGroup
	for range benchNodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			empty.Execute(ctx, nil)
		}()
	}
	wg.Wait()
}

func goroutinesChain(ctx context.Context) {
	var wg sync.WaitGroup
	prev := make(chan struct{})
	first := prev
	for range benchNodes {
		next := make(chan struct{})
		wg.Add(1)
		go func(wait, done chan struct{}) {
			defer wg.Done()
			<-wait
			empty.Execute(ctx, nil)
			close(done)
		}(prev, next)
		prev = next
	}
	empty.Execute(ctx, nil) // the source
	close(first)
	wg.Wait()
}
