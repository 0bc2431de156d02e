package runs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/substrate/density/pkg/artifact"
)

// Dir opens each file of the run at most once, whatever parts it reads:
// server_summary.json gives both the entry's metadata and the summary
// from one read.
func TestDirOpensEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	storedRunFiles(t, dir, "resume", "abc", tsA, `{"step_s": "x"}`)
	notices, err := artifact.NoticesJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileNotices), notices, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, parts := range []Part{PartAll, PartSummary, PartRows, PartSummary | PartRows, PartNotices} {
		opened := map[string]int{}
		st, err := readDir(dir, parts, func(_ context.Context, name string) (io.ReadCloser, error) {
			opened[name]++
			return artifact.OpenNoFollow(filepath.Join(dir, name))
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, n := range opened {
			if n != 1 {
				t.Errorf("parts %04b: %s opened %d times", parts, name, n)
			}
		}
		if opened[FileServerSummary] != 1 {
			t.Errorf("parts %04b: server_summary.json opened %d times, want 1 (the entry's metadata)", parts, opened[FileServerSummary])
		}
		if st.Entry.TestName != "resume" || st.Entry.RowKey == nil || (st.Summary != nil) != (parts&PartSummary != 0) {
			t.Errorf("parts %04b: entry %+v, row key %v, summary %v", parts, st.Entry.Run, st.Entry.RowKey, st.Summary != nil)
		}
	}
}

// A server_summary.json broken after its metadata still names the run
// (the metadata comes first); asked for, the summary is one Malformed
// problem, and not asked for, no problem.
func TestDirSummaryBrokenAfterMetadata(t *testing.T) {
	dir := t.TempDir()
	storedRunFiles(t, dir, "resume", "abc", tsA+7, "")
	path := filepath.Join(dir, FileServerSummary)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, parts := range []Part{PartAll, PartSummary, PartRows} {
		st, err := Dir(dir, parts)
		if err != nil {
			t.Fatal(err)
		}
		if st.Entry.TestName != "resume" || st.Entry.Start != tsA+7 || st.Entry.RowKey == nil {
			t.Errorf("parts %04b: entry %+v, row key %v", parts, st.Entry.Run, st.Entry.RowKey)
		}
		p := st.Problem(FileServerSummary)
		if parts&PartSummary == 0 {
			if p != nil || st.Summary != nil {
				t.Errorf("parts %04b: summary not asked for: problem %v", parts, p)
			}
			continue
		}
		if st.Summary != nil || p == nil || p.Kind != Malformed || len(st.Problems) != 1 {
			t.Errorf("parts %04b: summary %v, problems %v", parts, st.Summary != nil, st.Problems)
		}
	}
	if st, _ := Dir(dir, PartRows); metrics(st.Rows.All()...) != wantRows {
		t.Errorf("rows by the peeked metadata: %s", metrics(st.Rows.All()...))
	}
}
