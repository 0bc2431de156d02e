package plugin

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/substrate/density/internal/storetest"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/runs"
	"github.com/substrate/density/pkg/verdicts"
)

// The stored-run cache keeps a rich run (a ladder and 65 phase rows, as
// the 1,000-run fixture's) compactly and gives back exactly what was read:
// the rows, the run's values of every row, and a head whose default keys
// and values are the full run's; its size estimate is not below what the
// kept values take on the heap, and a thousand such runs fit the default
// storedRunCacheMiB with room to spare.
func TestStoredRunKeepsRichRunCompact(t *testing.T) {
	dir, _ := storetest.Template(t)
	read := func() artifact.RunRows {
		f, err := os.Open(filepath.Join(dir, runs.FileStatsJSONL))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rr, err := artifact.ReadRunRows(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rr
	}
	rr := read()
	if len(rr.Phases) < 20 || len(rr.Ladder) < 2 {
		t.Fatalf("template run has %d phase and %d ladder rows, want a rich run", len(rr.Phases), len(rr.Ladder))
	}
	e := runs.Entry{Run: runs.Run{ID: "r1", TestName: rr.Key.TestName, Tag: rr.Key.Tag, Start: 1234}}
	s, err := newStoredRun(e, rr)
	if err != nil {
		t.Fatal(err)
	}
	got := s.rows()
	if !reflect.DeepEqual(got.phases, rr.Phases) || !reflect.DeepEqual(got.ladder, rr.Ladder) || !reflect.DeepEqual(got.server, rr.Server) || !reflect.DeepEqual(got.trial, rr.Trial) {
		t.Error("the rows decoded from the kept run differ from the rows read")
	}
	want := verdicts.RunFromRunRows(rr)
	full := s.fullRun(e)
	if !reflect.DeepEqual(values(full), values(&want)) || full.ID != "r1" || full.Start != 1234 {
		t.Errorf("full run: %d values (id %s, start %d), want %d values as read", len(full.Values), full.ID, full.Start, len(want.Values))
	}
	head := s.headRun()
	if !slices.Equal(verdicts.DefaultKeys([]*verdicts.Run{head}), verdicts.DefaultKeys([]*verdicts.Run{&want})) {
		t.Errorf("head's default keys %v, want the full run's %v", verdicts.DefaultKeys([]*verdicts.Run{head}), verdicts.DefaultKeys([]*verdicts.Run{&want}))
	}
	for _, v := range head.Values {
		if !headCovers([]string{v.Key}) {
			t.Errorf("head holds %s, which it does not cover", v.Key)
		}
		if w, _ := want.Get(v.Key); !reflect.DeepEqual(w, v) {
			t.Errorf("head's %s = %v, full run's %v", v.Key, v, w)
		}
	}
	if len(head.Values) >= len(want.Values) || !s.more {
		t.Errorf("head holds %d of the run's %d values, want fewer", len(head.Values), len(want.Values))
	}

	// Heap taken by kept runs (each read afresh) against the estimate.
	const n = 200
	kept := make([]storedRun, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i], _ = newStoredRun(e, read()) // only what the kept run holds stays
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / n
	est := float64(storedRunBytes(kept[0]))
	t.Logf("a rich run kept: %.0f B on the heap, %.0f B estimated (%d B of JSON lines; stats.jsonl %d values); 1,000 runs: %.1f MiB", heap, est, len(s.phases)+len(s.ladder), len(want.Values), 1000*est/(1<<20))
	if est < heap {
		t.Errorf("estimate %.0f B below the heap a kept run takes, %.0f B", est, heap)
	}
	if 1000*est > DefaultStoredRunCacheMiB<<20/4 {
		t.Errorf("1,000 rich runs take %.0f MiB by the estimate, want at most a quarter of the default %d MiB", 1000*est/(1<<20), DefaultStoredRunCacheMiB)
	}
	runtime.KeepAlive(kept)
}

func values(r *verdicts.Run) []verdicts.Value { return r.Values }
