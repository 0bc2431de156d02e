package artifact

import (
	"reflect"
	"testing"
)

func TestFlatTrialMeasurements(t *testing.T) {
	row, err := ParseRow([]byte(`{"timestamp": "t", "tag": "g", "test_name": "n", "metric": "trial_summary", "measurements": {` +
		`"node_count": "3", "raw_configuration": {"machine_type": "n2-standard-8", "node_count": 4, "allocatable_cores": 23.5},` +
		`"frontiers": {"ap_ratio_p50": 2.5, "ap_ratio_p99": 4, "actors_per_node": 80.0, "multi_actor_worker": true, "x": [1]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := FlatTrialMeasurements(row.Measurements)
	want := Object{{"node_count", "3"}, {"machine_type", "n2-standard-8"}, {"allocatable_cores", "23.5"},
		{"actors_per_pod_p50", "2.5"}, {"actors_per_pod_p99", "4"}, {"actors_per_node", "80.0"}, {"multi_actor_worker", "True"}, {"x", nil}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	flat := Object{{"a", "1"}, {"b", nil}}
	if g := FlatTrialMeasurements(flat); !reflect.DeepEqual(g, flat) {
		t.Errorf("a flat row changed: %v", g)
	}
}
