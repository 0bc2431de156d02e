package plugin

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/internal/simrun"
	"github.com/substrate/density/pkg/artifact"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// checkSummary compares a one-row P frame with a percentile.Summary.
func checkSummary(t *testing.T, f *data.Frame, want percentile.Summary, unit string) {
	t.Helper()
	vals := want.Values()
	for i, k := range percentile.Keys() {
		fld := field(t, f, k)
		if got := num(t, fld, 0); !eqPtr(got, vals[i]) {
			t.Errorf("%s.%s = %s, want %s", f.Name, k, fmtPtr(got), fmtPtr(vals[i]))
		}
		if fld.Config == nil || fld.Config.Unit != unit {
			t.Errorf("%s.%s unit %+v, want %s", f.Name, k, fld.Config, unit)
		}
	}
}

// checkTimes compares a frame's time field with Unix timestamps.
func checkTimes(t *testing.T, f *data.Frame, want []int64) {
	t.Helper()
	tf := field(t, f, "time")
	if tf.Len() != len(want) {
		t.Fatalf("%s: %d points, want %d", f.Name, tf.Len(), len(want))
	}
	for i, w := range want {
		if got := timeAt(t, tf, i).Unix(); got != w {
			t.Fatalf("%s point %d at %d, want %d", f.Name, i, got, w)
		}
	}
}

func TestQueryTypesMatchHarvest(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, name)
			c := e.client(t)
			want := e.expected(t)
			run := e.runID
			// The comparisons below are only worth something if the run
			// has data in every block.
			if len(want.Packing.Timeseries) == 0 || len(want.NodePSI.CPU.Series) == 0 || len(want.PodPSI.IO.Series) == 0 ||
				want.Snapshots.CheckpointsInWindow == nil || len(want.ActiveActors.Timeseries) == 0 ||
				len(want.WorkingSet.PerActor.Timeseries) == 0 || want.OOM.Node == nil {
				t.Fatalf("scenario %s lacks data in a block: %+v", name, want.Notices)
			}

			t.Run("packing", func(t *testing.T) {
				r := e.one(t, c, map[string]any{"queryType": "packing", "run": run})
				if len(r.Frames) != 2 {
					t.Fatalf("%d frames", len(r.Frames))
				}
				s := r.Frames[0]
				var ts []int64
				for _, p := range want.Packing.Timeseries {
					ts = append(ts, p.Timestamp)
				}
				checkTimes(t, s, ts)
				for i, p := range want.Packing.Timeseries {
					if got := num(t, field(t, s, "busy_workers"), i); *got != p.Busy {
						t.Fatalf("busy at %d = %v, want %v", p.Timestamp, *got, p.Busy)
					}
					if got := num(t, field(t, s, "total_workers"), i); *got != p.Total {
						t.Fatalf("total at %d = %v, want %v", p.Timestamp, *got, p.Total)
					}
					if got := num(t, field(t, s, "packing_ratio"), i); !eqPtr(got, p.Ratio) {
						t.Fatalf("ratio at %d = %s, want %s", p.Timestamp, fmtPtr(got), fmtPtr(p.Ratio))
					}
				}
				if u := field(t, s, "packing_ratio").Config.Unit; u != unitRatio {
					t.Errorf("ratio unit %q", u)
				}
				if !slices.Contains(splitLines(s.Meta.ExecutedQueryString), harvest.PackingQuery(harvest.DefaultSelectors())) {
					t.Errorf("ExecutedQueryString %q lacks the packing query", s.Meta.ExecutedQueryString)
				}
				checkSummary(t, r.Frames[1], want.Packing.Summary, unitRatio)
			})

			for _, scope := range []string{"node", "pod"} {
				for _, res := range []string{"cpu", "memory", "io"} {
					t.Run("psi "+scope+" "+res, func(t *testing.T) {
						r := e.one(t, c, map[string]any{"queryType": "psi", "run": run, "scope": scope, "resource": res})
						b, countKey, by := want.NodePSI, "nodes", "instance"
						if scope == "pod" {
							b, countKey, by = want.PodPSI, "pods", "pod"
						}
						wr := b.Resource(res)
						s := r.Frames[0]
						if len(s.Fields)-1 != len(wr.Series) {
							t.Fatalf("%d series fields, want %d", len(s.Fields)-1, len(wr.Series))
						}
						tf := field(t, s, "time")
						row := map[int64]int{}
						for i := 0; i < tf.Len(); i++ {
							row[timeAt(t, tf, i).Unix()] = i
						}
						for j, ws := range wr.Series {
							f := s.Fields[j+1]
							if f.Labels[by] != ws.Labels[by] || f.Config.Unit != unitPercent {
								t.Fatalf("series %d labels %v unit %q, want %s=%s", j, f.Labels, f.Config.Unit, by, ws.Labels[by])
							}
							for _, p := range ws.Samples {
								if got := num(t, f, row[p.T]); got == nil || *got != p.V {
									t.Fatalf("%s at %d = %s, want %v", ws.Labels[by], p.T, fmtPtr(got), p.V)
								}
							}
						}
						checkSummary(t, r.Frames[1], wr.Summary, unitPercent)
						if got := num(t, field(t, r.Frames[1], countKey), 0); !eqPtr(got, i2f(b.Count)) {
							t.Errorf("%s = %s, want %s", countKey, fmtPtr(got), fmtPtr(i2f(b.Count)))
						}
					})
				}
			}

			t.Run("snapshots", func(t *testing.T) {
				r := e.one(t, c, map[string]any{"queryType": "snapshots", "run": run})
				f := r.Frames[0]
				fields := want.Snapshots.Fields()
				if len(f.Fields) != 18 || len(fields) != 18 {
					t.Fatalf("%d fields, want the 18 snapshot keys", len(f.Fields))
				}
				for i, w := range fields {
					got := f.Fields[i]
					if got.Name != w.Key {
						t.Fatalf("field %d is %q, want %q", i, got.Name, w.Key)
					}
					wv := w.Float
					if w.Unit == "" {
						wv = i64f(w.Int)
					}
					if v := num(t, got, 0); !eqPtr(v, wv) {
						t.Errorf("%s = %s, want %s", w.Key, fmtPtr(v), fmtPtr(wv))
					}
					if got.Config.Unit != snapshotUnits[w.Unit] {
						t.Errorf("%s unit %q, want %q", w.Key, got.Config.Unit, snapshotUnits[w.Unit])
					}
				}
			})

			t.Run("activeActors", func(t *testing.T) {
				r := e.one(t, c, map[string]any{"queryType": "activeActors", "run": run})
				s := r.Frames[0]
				var ts []int64
				for _, p := range want.ActiveActors.Timeseries {
					ts = append(ts, p.Timestamp)
				}
				checkTimes(t, s, ts)
				for i, p := range want.ActiveActors.Timeseries {
					if got := num(t, field(t, s, "active_actors"), i); *got != p.ActiveActors {
						t.Fatalf("active_actors at %d = %v, want %v", p.Timestamp, *got, p.ActiveActors)
					}
					if got := num(t, field(t, s, "active_atelets"), i); *got != float64(p.ActiveAtelets) {
						t.Fatalf("active_atelets at %d = %v, want %v", p.Timestamp, *got, p.ActiveAtelets)
					}
				}
				checkSummary(t, r.Frames[1], want.ActiveActors.Summary, unitNone)
				if got := num(t, field(t, r.Frames[1], "atelets"), 0); !eqPtr(got, i2f(want.ActiveActors.Atelets)) {
					t.Errorf("atelets = %s", fmtPtr(got))
				}
			})

			for _, block := range harvest.WorkingSetBlocks() {
				t.Run("workingSet "+block, func(t *testing.T) {
					r := e.one(t, c, map[string]any{"queryType": "workingSet", "run": run, "block": block})
					wb := want.WorkingSet.Block(block)
					s := r.Frames[0]
					var ts []int64
					for _, p := range wb.Timeseries {
						ts = append(ts, p.Timestamp)
					}
					checkTimes(t, s, ts)
					for i, p := range wb.Timeseries {
						if got := num(t, field(t, s, "total_gb"), i); *got != p.TotalGB {
							t.Fatalf("total_gb at %d = %v, want %v", p.Timestamp, *got, p.TotalGB)
						}
						if got := num(t, field(t, s, "max_gb"), i); *got != p.MaxGB {
							t.Fatalf("max_gb at %d = %v, want %v", p.Timestamp, *got, p.MaxGB)
						}
					}
					if u := field(t, s, "total_gb").Config.Unit; u != unitGiB {
						t.Errorf("unit %q", u)
					}
					checkSummary(t, r.Frames[1], wb.Summary, unitGiB)
					if got := num(t, field(t, r.Frames[1], "count"), 0); !eqPtr(got, i2f(wb.Count)) {
						t.Errorf("count = %s, want %s", fmtPtr(got), fmtPtr(i2f(wb.Count)))
					}
				})
			}

			t.Run("oomEvents", func(t *testing.T) {
				r := e.one(t, c, map[string]any{"queryType": "oomEvents", "run": run})
				f := r.Frames[0]
				vals := want.OOM.Values()
				for i, k := range harvest.OOMKeys()[:2] {
					if got := num(t, field(t, f, k), 0); !eqPtr(got, i64f(vals[i])) {
						t.Errorf("%s = %s, want %s", k, fmtPtr(got), fmtPtr(i64f(vals[i])))
					}
				}
				// Ground truth: the simulator's kills. node counts global
				// OOMs on nodes that hosted a live worker; pod counts kills
				// inside worker pods (pod and container cgroups).
				var node, pod float64
				for _, k := range e.truth.OOMKills {
					switch {
					case k.Kind == "node" && k.WorkerNode:
						node++
					case k.Kind == "pod" || k.Kind == "container":
						pod++
					}
				}
				if got := num(t, field(t, f, "node"), 0); got == nil || *got != node {
					t.Errorf("node OOM kills = %s, simulator killed %v", fmtPtr(got), node)
				}
				if got := num(t, field(t, f, "pod"), 0); got == nil || *got != pod {
					t.Errorf("pod OOM kills = %s, simulator killed %v", fmtPtr(got), pod)
				}
				// The run is not in the store with a server_summary.json:
				// the Kubernetes counts are null, with the reason.
				for _, k := range harvest.OOMKeys()[2:] {
					if got := num(t, field(t, f, k), 0); got != nil {
						t.Errorf("%s = %v, want null", k, *got)
					}
				}
				if !hasNotice(f, "is not in the results store") {
					t.Errorf("no notice says why the Kubernetes counts are null: %+v", f.Meta.Notices)
				}
			})

			t.Run("summary", func(t *testing.T) {
				r := e.one(t, c, map[string]any{"queryType": "summary", "run": run})
				f := r.Frames[0]
				if f.Rows() != 1 {
					t.Fatalf("%d rows", f.Rows())
				}
				if id := f.Fields[0].At(0).(string); id != run {
					t.Fatalf("id %q", id)
				}
				wr := *want
				wr.SetKubernetes(harvest.KubernetesOOM{Reason: "x"})
				m := artifact.ServerSummaryMeasurements(&wr)
				if len(m) != 80 {
					t.Fatalf("%d measurements", len(m))
				}
				for _, kv := range m {
					var w *float64
					if s, ok := kv.Value.(string); ok {
						v, _ := strconv.ParseFloat(s, 64)
						w = &v
					}
					if got := num(t, field(t, f, kv.Key), 0); !eqPtr(got, w) {
						t.Errorf("%s = %s, export writes %v", kv.Key, fmtPtr(got), kv.Value)
					}
				}
			})
		})
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func hasNotice(f *data.Frame, sub string) bool {
	if f.Meta == nil {
		return false
	}
	for _, n := range f.Meta.Notices {
		if containsStr(n.Text, sub) {
			return true
		}
	}
	return false
}

func containsStr(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The packing ratio of the steady scenario (one ateapi process, no
// redeploy) at each step equals the simulator's worker states: the latest
// exported sample at or before the step, within the 5-minute lookback.
func TestPackingMatchesSimulatorTruth(t *testing.T) {
	e := newEnv(t, "steady")
	c := e.client(t)
	r := e.one(t, c, map[string]any{"queryType": "packing", "run": e.runID})
	s := r.Frames[0]
	var states []simrun.WorkerStates
	for _, w := range e.truth.WorkerStates {
		if w.Pool == e.truth.PoolName {
			states = append(states, w)
		}
	}
	tf := field(t, s, "time")
	if tf.Len() < 100 {
		t.Fatalf("only %d points", tf.Len())
	}
	checked := 0
	for i := 0; i < tf.Len(); i++ {
		at := timeAt(t, tf, i).Unix()
		var latest *simrun.WorkerStates
		for j := range states {
			if states[j].T <= at && states[j].T >= at-simrun.DefaultLookback {
				if latest == nil || states[j].T > latest.T {
					latest = &states[j]
				}
			}
		}
		if latest == nil {
			t.Fatalf("no simulator state at %d, yet the frame has a point", at)
		}
		busy := latest.Partial + latest.AtCapacity
		total := busy + latest.Idle
		got := num(t, field(t, s, "packing_ratio"), i)
		if total == 0 {
			if got != nil {
				t.Fatalf("ratio at %d = %v with an empty pool", at, *got)
			}
			continue
		}
		want := percentile.Round(busy/total, 4)
		if got == nil || *got != want {
			t.Fatalf("ratio at %d = %s, simulator %v/%v = %v", at, fmtPtr(got), busy, total, want)
		}
		checked++
	}
	t.Logf("%d packing points equal the simulator's worker states", checked)
}

// The runs table and annotations give the stored run the simulator's own
// window, steady window and peak user count.
func TestRunsAndAnnotationsMatchSimulatorTruth(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, name)
			c := e.client(t)
			tr := e.truth
			r := e.one(t, c, map[string]any{"queryType": "runs"})
			f := r.Frames[0]
			// The Prometheus-discovered copy of the same trial is hidden
			// behind the stored run.
			if f.Rows() != 1 {
				t.Fatalf("%d runs listed, want 1", f.Rows())
			}
			checks := []struct {
				field string
				want  int64
			}{{"start", tr.Start}, {"end", tr.End}, {"steady_start", tr.SteadyStart}, {"steady_end", tr.SteadyEnd}}
			for _, ch := range checks {
				if got := timeAt(t, field(t, f, ch.field), 0).Unix(); got != ch.want {
					t.Errorf("%s = %d, simulator %d", ch.field, got, ch.want)
				}
			}
			if got := num(t, field(t, f, "peak_users"), 0); got == nil || *got != tr.PeakUsers {
				t.Errorf("peak_users = %s, simulator %v", fmtPtr(got), tr.PeakUsers)
			}
			if got := num(t, field(t, f, "locust_exit_code"), 0); got == nil || *got != 0 {
				t.Errorf("locust_exit_code = %s", fmtPtr(got))
			}
			for name, want := range map[string]string{"id": e.runID, "test_name": tr.TestName, "tag": tr.Tag} {
				if got := field(t, f, name).At(0).(string); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}

			ts := e.one(t, c, map[string]any{"queryType": "tests"}).Frames[0]
			if ts.Rows() != 1 || field(t, ts, "test_name").At(0).(string) != tr.TestName {
				t.Errorf("tests: %d rows", ts.Rows())
			}

			a := e.one(t, c, map[string]any{"queryType": "annotations"})
			af := a.Frames[0]
			if af.Rows() != 2 {
				t.Fatalf("%d annotations, want run + steady", af.Rows())
			}
			wantRows := []struct {
				from, to int64
				tags     string
			}{{tr.Start, tr.End, "run," + tr.TestName}, {tr.SteadyStart, tr.SteadyEnd, "steady," + tr.TestName}}
			for i, w := range wantRows {
				if got := timeAt(t, field(t, af, "time"), i).Unix(); got != w.from {
					t.Errorf("annotation %d from %d, want %d", i, got, w.from)
				}
				if got := timeAt(t, field(t, af, "timeEnd"), i).Unix(); got != w.to {
					t.Errorf("annotation %d to %d, want %d", i, got, w.to)
				}
				if got := field(t, af, "tags").At(i).(string); got != w.tags {
					t.Errorf("annotation %d tags %q, want %q", i, got, w.tags)
				}
			}
			if got := field(t, af, "title").At(0).(string); got != tr.TestName+" "+tr.Tag {
				t.Errorf("title %q", got)
			}
		})
	}
}

// Prometheus discovery alone (no store): the run found in the user-count
// series starts at the first 10 s instant where the exported Locust series
// is > 0 and ends at the last one (derived from the simulator's exported
// samples with the 5-minute lookback, not through PromQL).
func TestDiscoveredRunMatchesExportedUsers(t *testing.T) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, name)
			delete(e.jsonData, "resultsStore")
			c := e.client(t)
			users := e.truth.Series("locust_users", nil)
			if len(users) != 1 {
				t.Fatalf("%d locust_users series", len(users))
			}
			var first, last int64
			var samples []runs.UserSample
			for g := (e.truth.Start - 600) / 10 * 10; g <= e.truth.End+600; g += 10 {
				v, ok := users[0].At(g, simrun.DefaultLookback)
				if !ok || math.IsNaN(v) {
					continue
				}
				if v > 0 {
					if first == 0 {
						first = g
					}
					last = g
				}
				samples = append(samples, runs.UserSample{Timestamp: g, Users: v})
			}
			var inRun []runs.UserSample
			for _, s := range samples {
				if s.Timestamp >= first && s.Timestamp <= last {
					inRun = append(inRun, s)
				}
			}
			steady := runs.ComputeSteady(inRun, first, last)
			ss, se := steady.Start, steady.End
			r := e.one(t, c, map[string]any{"queryType": "runs"})
			f := r.Frames[0]
			if f.Rows() != 1 {
				t.Fatalf("%d runs, want 1", f.Rows())
			}
			if id := field(t, f, "id").At(0).(string); id != runs.PromRunID(first) {
				t.Errorf("id %s, want %s", id, runs.PromRunID(first))
			}
			for _, ch := range []struct {
				f    string
				want int64
			}{{"start", first}, {"end", last}, {"steady_start", ss}, {"steady_end", se}} {
				if got := timeAt(t, field(t, f, ch.f), 0).Unix(); got != ch.want {
					t.Errorf("%s = %d, want %d", ch.f, got, ch.want)
				}
			}
			if got := num(t, field(t, f, "peak_users"), 0); got == nil || *got != e.truth.PeakUsers {
				t.Errorf("peak %s, simulator %v", fmtPtr(got), e.truth.PeakUsers)
			}
			// The discovered run resolves by id and latest.
			for _, ref := range []string{runs.PromRunID(first), "latest"} {
				p := e.one(t, c, map[string]any{"queryType": "packing", "run": ref})
				if p.Frames[0].Rows() == 0 {
					t.Errorf("run %s: empty packing", ref)
				}
			}
		})
	}
}
