package frontier_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/clusterfacts"
	"github.com/substrate/density/pkg/frontier"
	"github.com/substrate/density/pkg/runs"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func ptr[T any](v T) *T { return &v }

// issueFacts: the issue's three nodes of 3920m / 13591700Ki (11.76 cores,
// 38.89 GiB) with four worker pods.
var issueFacts = clusterfacts.Facts{
	MachineType: []string{"n2-standard-4"}, NodeCount: ptr(3), AllocatableCores: ptr(11.76), AllocatableRAMGB: ptr(38.89),
	WorkerPodCount: ptr(4), KubernetesVersion: []string{"v1.37.2"}, WorkerActorCapacity: []int64{1, 50, 1000},
	WorkerMemoryLimitGB: []float64{16}, SandboxClass: []string{"gvisor", "microvm"},
}

// frontierKeys are the computed keys checked by TestTrialSummary.
var frontierKeys = []string{
	"multi_actor_worker", "actors_per_node", "actors_per_vcpu", "actors_per_gb_ram",
	"actors_per_pod_p50", "actors_per_pod_p90", "actors_per_pod_p99",
}

func values(m frontier.Measurements, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		v, ok := m.Get(k)
		switch {
		case !ok:
			out[i] = "<absent>"
		case v == nil:
			out[i] = "null"
		default:
			out[i] = *v
		}
	}
	return out
}

func TestTrialSummary(t *testing.T) {
	tests := []struct {
		name string
		in   frontier.Inputs
		// want: multi, per node, per vcpu, per GiB, p50, p90, p99.
		want []string
	}{
		{
			// peak 100 users × 2 = 200 actors: 200/3 = 66.67, 200/11.76 =
			// 17.01, 200/38.89 = 5.14. Ratios u×2/4 = 5, 25, 50, 50, 40;
			// sorted [5 25 40 50 50]: p50 = v[2] = 40, p90 = p99 = v[4] = 50.
			name: "observed users, actors per user 2",
			in:   frontier.Inputs{Facts: issueFacts, ObservedUsers: []float64{10, 50, 100, 100, 80}, ActorsPerUser: 2},
			want: []string{"true", "66.67", "17.01", "5.14", "40.0", "50.0", "50.0"},
		},
		{
			// Nothing observed: -u 30 × 1 actor (0 means 1) = 30; 30/3 = 10.0,
			// 30/11.76 = 2.55, 30/38.89 = 0.77. No samples for the per-pod ratios.
			name: "-u fallback when nothing observed",
			in:   frontier.Inputs{Facts: issueFacts, Users: 30, ActorsPerUser: 0, ObservedUsers: []float64{0, -1}},
			want: []string{"null", "10.0", "2.55", "0.77", "null", "null", "null"},
		},
		{
			name: "-u ignored when users were observed",
			in:   frontier.Inputs{Facts: issueFacts, Users: 500, ObservedUsers: []float64{6}},
			want: []string{"true", "2.0", "0.51", "0.15", "1.5", "1.5", "1.5"},
		},
		{
			// 2 users × 50 actors on 4 pods = 25 per pod.
			name: "actors per user scales every frontier",
			in:   frontier.Inputs{Facts: issueFacts, ObservedUsers: []float64{2}, ActorsPerUser: 50},
			want: []string{"true", "33.33", "8.5", "2.57", "25.0", "25.0", "25.0"},
		},
		{
			// 8 users × 0.5 = 4 actors on 4 pods: exactly 1 per pod is not multi.
			name: "one actor per pod is not multi-actor",
			in:   frontier.Inputs{Facts: issueFacts, ObservedUsers: []float64{8}, ActorsPerUser: 0.5},
			want: []string{"false", "1.33", "0.34", "0.1", "1.0", "1.0", "1.0"},
		},
		{
			// 10000 actors over the reported 38.89 = 257.14 (over the
			// unrounded 38.8859 it would be 257.16).
			name: "frontiers divide by the reported, rounded denominators",
			in: frontier.Inputs{Facts: clusterfacts.Facts{NodeCount: ptr(3), AllocatableCores: ptr(11.757), AllocatableRAMGB: ptr(38.885929), WorkerPodCount: ptr(3)},
				ObservedUsers: []float64{10000}},
			want: []string{"true", "3333.33", "850.34", "257.14", "3333.33", "3333.33", "3333.33"},
		},
		{
			// Ratios round to 4 first: 1/3 → 0.3333, 2/3 → 0.6667, 1.0; then 2.
			name: "ratios rounded to 4 then percentiles to 2",
			in:   frontier.Inputs{Facts: clusterfacts.Facts{WorkerPodCount: ptr(3)}, ObservedUsers: []float64{1, 2, 3}},
			want: []string{"false", "null", "null", "null", "0.67", "1.0", "1.0"},
		},
		{
			name: "null and zero denominators give null",
			in: frontier.Inputs{Facts: clusterfacts.Facts{NodeCount: nil, AllocatableCores: ptr(0.0), AllocatableRAMGB: ptr(0.001), WorkerPodCount: ptr(0)},
				ObservedUsers: []float64{10}},
			want: []string{"null", "null", "null", "null", "null", "null", "null"},
		},
		{
			name: "denied pod list: everything null",
			in:   frontier.Inputs{ObservedUsers: []float64{10}},
			want: []string{"null", "null", "null", "null", "null", "null", "null"},
		},
		{
			name: "no users at all",
			in:   frontier.Inputs{Facts: issueFacts},
			want: []string{"null", "null", "null", "null", "null", "null", "null"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, notices := frontier.TrialSummary(tt.in)
			if got := values(m, frontierKeys); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			// Every computed null has a notice.
			noticed := map[string]bool{}
			for _, n := range notices {
				if n.Reason == "" {
					t.Errorf("empty reason for %s", n.Field)
				}
				noticed[n.Field] = true
			}
			for i, k := range frontierKeys {
				if tt.want[i] == "null" && !noticed[k] {
					t.Errorf("%s is null without a notice", k)
				}
			}
		})
	}
}

func TestFactStrings(t *testing.T) {
	keys := []string{"machine_type", "node_count", "allocatable_cores", "allocatable_ram_gb", "worker_pod_count",
		"kubernetes_version", "worker_actor_capacity", "worker_memory_limit_gb", "sandbox_class", "run_start", "run_end"}
	tests := []struct {
		name  string
		facts clusterfacts.Facts
		want  []string
	}{
		{"issue example", issueFacts,
			[]string{"n2-standard-4", "3", "11.76", "38.89", "4", "v1.37.2", "1,50,1000", "16.0", "gvisor,microvm", "1772366400", "1772370000"}},
		{"zero worker pods is a reading", clusterfacts.Facts{NodeCount: ptr(0), AllocatableCores: ptr(0.0), AllocatableRAMGB: ptr(0.0), WorkerPodCount: ptr(0)},
			[]string{"null", "0", "0.0", "0.0", "0", "null", "null", "null", "null", "1772366400", "1772370000"}},
		{"all null", clusterfacts.Facts{},
			[]string{"null", "null", "null", "null", "null", "null", "null", "null", "null", "1772366400", "1772370000"}},
		{"sets sorted numerically and deduplicated", clusterfacts.Facts{WorkerActorCapacity: []int64{1000, 50, 1, 50},
			WorkerMemoryLimitGB: []float64{16, 1.5, 0.25}, MachineType: []string{"n2", "c3"}, AllocatableCores: ptr(12.0)},
			[]string{"c3,n2", "null", "12.0", "null", "null", "null", "1,50,1000", "0.25,1.5,16.0", "null", "1772366400", "1772370000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := frontier.TrialSummary(frontier.Inputs{Facts: tt.facts, RunStart: 1772366400, RunEnd: 1772370000})
			if got := values(m, keys); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func op(name, req, fail string) runs.OperationStats {
	return runs.OperationStats{Type: "GET", Name: name, Requests: req, Failures: fail, Line: 2}
}

func TestFailureRatios(t *testing.T) {
	tests := []struct {
		name  string
		stats []runs.OperationStats
		err   error
		want  string // key=value,... in order
	}{
		{"spec names and the aggregate first", []runs.OperationStats{
			op("ResumeActorFirstResume", "7", "3"), op("DurDirWrite", "3", "1"), op("HTTPGet", "10000", "1"), op("Aggregated", "10010", "5"),
		}, nil, "aggregate_failure_ratio=0.0005,resume_actor_first_resume_failure_ratio=0.4286,dur_dir_write_failure_ratio=0.3333,http_get_failure_ratio=0.0001"},
		{"0 requests: key present with null", []runs.OperationStats{op("Idle", "0", "0"), op("Aggregated", "0", "0")},
			nil, "aggregate_failure_ratio=null,idle_failure_ratio=null"},
		{"last row of a name wins, in its first position", []runs.OperationStats{
			op("A", "10", "1"), op("B", "10", "2"), op("A", "10", "5"),
		}, nil, "a_failure_ratio=0.5,b_failure_ratio=0.2"},
		{"names that snake alike share a key", []runs.OperationStats{op("HTTPGet", "4", "1"), op("http get", "4", "2")},
			nil, "http_get_failure_ratio=0.5"},
		{"Python int(): spaces, sign, underscores", []runs.OperationStats{op("X", " 1_000 ", "+10")}, nil, "x_failure_ratio=0.01"},
		{"no aggregate row: no aggregate key", []runs.OperationStats{op("X", "4", "0")}, nil, "x_failure_ratio=0.0"},
		{"corrupt integer: only aggregate null", []runs.OperationStats{
			op("A", "10", "1"), op("B", "ten", "2"), op("Aggregated", "20", "3"),
		}, nil, "aggregate_failure_ratio=null"},
		{"corrupt failure count without an aggregate row", []runs.OperationStats{op("A", "10", "1.0")}, nil, "aggregate_failure_ratio=null"},
		{"empty count is corrupt", []runs.OperationStats{op("A", "", "0")}, nil, "aggregate_failure_ratio=null"},
		{"unreadable stats.csv", nil, errors.New("permission denied"), "aggregate_failure_ratio=null"},
		{"no rows: no keys", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, notices := frontier.TrialSummary(frontier.Inputs{Stats: tt.stats, StatsErr: tt.err})
			var got []string
			after := false
			for _, x := range m {
				if x.Key == "actors_per_pod_p99" {
					after = true
					continue
				}
				if !after {
					continue
				}
				v := "null"
				if x.Value != nil {
					v = *x.Value
				}
				got = append(got, x.Key+"="+v)
			}
			if s := strings.Join(got, ","); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
			if strings.Contains(tt.want, "=null") {
				found := false
				for _, n := range notices {
					found = found || strings.HasSuffix(n.Field, "_failure_ratio")
				}
				if !found {
					t.Errorf("null ratio without a notice: %+v", notices)
				}
			}
		})
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{
		"ResumeActorFirstResume": "resume_actor_first_resume",
		"DurDirWrite":            "dur_dir_write",
		"HTTPGet":                "http_get",
		"getItem":                "get_item",
		"ABCDef":                 "abc_def",
		"Get2FA":                 "get2_fa",
		"/api/users?id=[id]":     "api_users_id_id",
		"  Spawn Actor  ":        "spawn_actor",
		"already_snake__case":    "already_snake_case",
		"Über-Call":              "ber_call",
		"resumeActor/HTTPPut":    "resume_actor_http_put",
	} {
		if got := frontier.Snake(in); got != want {
			t.Errorf("Snake(%q) = %q, want %q", in, got, want)
		}
	}
	if got := frontier.RatioKey("Aggregated"); got != "aggregate_failure_ratio" {
		t.Errorf("RatioKey(Aggregated) = %q", got)
	}
}

func TestShouldWriteTrialSummary(t *testing.T) {
	tests := []struct {
		name    string
		status  *runs.Status
		hasRows bool
		want    bool
	}{
		{"stats_generated true", &runs.Status{StatsGenerated: ptr(true)}, false, true},
		{"stats_generated false wins over rows", &runs.Status{StatsGenerated: ptr(false)}, true, false},
		{"status without the flag", &runs.Status{}, true, false},
		{"no status.json, rows", nil, true, true},
		{"no status.json, no rows", nil, false, false},
	}
	for _, tt := range tests {
		if got := frontier.ShouldWriteTrialSummary(tt.status, tt.hasRows); got != tt.want {
			t.Errorf("%s: got %v", tt.name, got)
		}
	}
}

// TestGoldenRow pins a full trial_summary row byte for byte.
func TestGoldenRow(t *testing.T) {
	md, err := frontier.ParseMetadata(`{"cluster": "lab-3", "nodes_requested": 3, "ratio": 3.0, "spot": true, "note": null, "x": "from env"}`,
		`{"x": "from flag", "pools": {"a": 1, "b": [1, 2.5, "é"]}}`)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := frontier.TrialSummary(frontier.Inputs{
		Facts:         issueFacts,
		ObservedUsers: []float64{10, 50, 100, 100, 80},
		ActorsPerUser: 2,
		Stats: []runs.OperationStats{
			op("ResumeActorFirstResume", "7", "3"), op("DurDirWrite", "3", "1"), op("HTTPGet", "10000", "1"),
			op("Idle", "0", "0"), op("Aggregated", "10010", "5"),
		},
		Metadata: md,
		RunStart: 1772366400, RunEnd: 1772370000,
	})
	line, err := frontier.Row(m, 1772366400, "abc123", "density-smoke").MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	line = append(line, '\n')
	path := filepath.Join("testdata", "trial_summary.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, line, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(line, want) {
		t.Errorf("row differs from %s\n got %s\nwant %s", path, line, want)
	}
	// The key order is the spec's.
	wantOrder := "machine_type node_count allocatable_cores allocatable_ram_gb worker_pod_count kubernetes_version " +
		"worker_actor_capacity worker_memory_limit_gb sandbox_class run_start run_end " +
		"metadata_cluster metadata_nodes_requested metadata_ratio metadata_spot metadata_x metadata_pools " +
		"multi_actor_worker actors_per_node actors_per_vcpu actors_per_gb_ram actors_per_pod_p50 actors_per_pod_p90 actors_per_pod_p99 " +
		"aggregate_failure_ratio resume_actor_first_resume_failure_ratio dur_dir_write_failure_ratio http_get_failure_ratio idle_failure_ratio"
	var keys []string
	for _, x := range m {
		keys = append(keys, x.Key)
	}
	if got := strings.Join(keys, " "); got != wantOrder {
		t.Errorf("key order\n got %s\nwant %s", got, wantOrder)
	}
}
