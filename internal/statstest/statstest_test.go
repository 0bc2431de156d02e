package statstest

import "testing"

func TestLine(t *testing.T) {
	got := Line("2026-12-01T10:00:00Z", "abc", "server_summary", "restore_p99_s", "4.0", "checkpoint_p99_s", "null")
	want := `{"timestamp": "2026-12-01T10:00:00Z", "tag": "abc", "test_name": "nightly", "metric": "server_summary", "measurements": {"restore_p99_s": "4.0", "checkpoint_p99_s": null}}` + "\n"
	if got != want {
		t.Errorf("Line:\n got  %s want %s", got, want)
	}
}
