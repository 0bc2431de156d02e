package statstest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLine(t *testing.T) {
	got := Line("2026-12-01T10:00:00Z", "abc", "server_summary", "restore_p99_s", "4.0", "checkpoint_p99_s", "null")
	want := `{"timestamp": "2026-12-01T10:00:00Z", "tag": "abc", "test_name": "nightly", "metric": "server_summary", "measurements": {"restore_p99_s": "4.0", "checkpoint_p99_s": null}}` + "\n"
	if got != want {
		t.Errorf("Line:\n got  %s want %s", got, want)
	}
}

func TestServerSummary(t *testing.T) {
	dir := t.TempDir()
	rows := Line("1", "abc", "trial_summary", "restore_p99_s", "9") +
		Line("1", "abc", "server_summary", "restore_p99_s", "4.5", "checkpoint_p99_s", "null", "note", "text")
	if err := os.WriteFile(filepath.Join(dir, "stats.jsonl"), []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	got := ServerSummary(t, dir)
	if v, ok := got["restore_p99_s"]; !ok || v == nil || *v != 4.5 {
		t.Errorf("restore_p99_s = %v, want 4.5 (the server_summary row's)", v)
	}
	if v, ok := got["checkpoint_p99_s"]; !ok || v != nil {
		t.Errorf("checkpoint_p99_s = %v, %v; want present and null", v, ok)
	}
	if _, ok := got["note"]; ok || len(got) != 2 {
		t.Errorf("got %v: the text value must be left out", got)
	}
}
