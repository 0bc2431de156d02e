package cluster_test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/clusterfacts"
)

// The scale run: 5,000 nodes and 100,000 pods through the test
// server (which filters by label and field selector and paginates like the
// real one), with 5,000 to 20,000 of the pods live workers on 2,000 nodes.
//
//	go test ./pkg/cluster -run '^$' -bench DiscoverScale -benchtime 3x
//
// Metrics per run: requests, peak heap above the starting live heap
// (client and in-process server together, garbage included), and the heap
// retained by the result per worker pod, next to the same figure for a
// list that keeps whole Pod objects.

func scaleCluster(workers int) kubefake.Synthetic {
	return kubefake.Synthetic{Nodes: 5000, WorkerNodes: 2000, Pods: 100_000, Workers: workers, Namespace: ns, LabelKey: labelKey}
}

// scaleFacts: 2,000 worker nodes × 3.92 cores = 7840.0; × 13591700 KiB =
// 25924.11 GiB (Python: round(2000*13591700*1024/2**30, 2)).
func scaleFacts(workers int) clusterfacts.Facts {
	return clusterfacts.Facts{
		MachineType: []string{"c3-standard-4", "n2-standard-4"}, NodeCount: ptr(2000), AllocatableCores: ptr(7840.0),
		AllocatableRAMGB: ptr(25924.11), WorkerPodCount: ptr(workers), KubernetesVersion: []string{"v1.37.2"},
		WorkerActorCapacity: []int64{50, 100}, WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor", "microvm"},
	}
}

func scaleServer(tb testing.TB, sc kubefake.Synthetic) (*kubefake.Server, kubernetes.Interface) {
	s := kubefake.New(kubefake.Config{Pods: sc.PodSource(), Nodes: sc.NodeSource(), Token: token})
	tb.Cleanup(s.Close)
	c, err := cluster.NewClient(cluster.Access{Mode: cluster.ModeToken, URL: s.URL, Token: token, Timeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	return s, c
}

// heapObjects is the live+unswept heap object bytes, cheap to sample.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakSampler records the highest heap object bytes while running.
func peakSampler() (stop func() uint64) {
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if h := heapObjects(); h > peak {
				peak = h
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak }
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func BenchmarkDiscoverScale(b *testing.B) {
	for _, workers := range []int{5_000, 10_000, 20_000} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			sc := scaleCluster(workers)
			s, c := scaleServer(b, sc)
			want := scaleFacts(workers)
			var peak, retained uint64
			runs := 0
			for b.Loop() {
				base := liveHeap()
				stop := peakSampler()
				r := cluster.Discover(context.Background(), c, cluster.Options{Timeout: 30 * time.Second})
				if p := stop(); p > base {
					peak = max(peak, p-base)
				}
				b.StopTimer()
				if !reflect.DeepEqual(r.Facts, want) || len(r.Notices) != 0 {
					b.Fatalf("facts %s notices %+v", show(r.Facts), r.Notices)
				}
				retained = max(retained, liveHeap()-base)
				runtime.KeepAlive(r)
				runs++
				b.StartTimer()
			}
			b.ReportMetric(float64(s.Requests(""))/float64(runs), "requests/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(retained)/float64(workers), "retained-B/worker")
		})
	}
	// The comparison: the same worker pods kept as whole objects.
	b.Run("whole-pods/workers=20000", func(b *testing.B) {
		_, c := scaleServer(b, scaleCluster(20_000))
		var retained uint64
		for b.Loop() {
			base := liveHeap()
			var kept []corev1.Pod
			opts := metav1.ListOptions{LabelSelector: labelKey, Limit: 500}
			for {
				l, err := c.CoreV1().Pods(ns).List(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				kept = append(kept, l.Items...)
				if opts.Continue = l.Continue; opts.Continue == "" {
					break
				}
			}
			b.StopTimer()
			if len(kept) != 20_000+20_000 { // live workers and the completed ones
				b.Fatalf("%d pods", len(kept))
			}
			retained = max(retained, liveHeap()-base)
			runtime.KeepAlive(kept)
			b.StartTimer()
		}
		b.ReportMetric(float64(retained)/40_000, "retained-B/pod")
	})
}
