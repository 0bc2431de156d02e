package plugin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/data"

	"github.com/substrate/density/pkg/runs"
)

// A stored run's summary frame, over gRPC, carries the notices its export
// recorded in notices.json (why each null field is null, as warnings); a
// notices.json that does not parse is one notice saying so, never a failed
// query; a run without one (older runs) shows no recorded reason.
func TestStoredSummaryNotices(t *testing.T) {
	const reason = "cluster_facts.node_count: null: cluster facts are switched off (--no-cluster-facts)"
	for _, c := range []struct {
		name     string
		notices  func([]byte) []byte // nil: no notices.json
		want     string
		sev      data.NoticeSeverity
		wantNone bool
	}{
		{"recorded", func(b []byte) []byte { return b }, reason, data.NoticeSeverityWarning, false},
		{"malformed", func([]byte) []byte { return []byte(`[{"block": 1}]`) }, "notices.json could not be read", data.NoticeSeverityWarning, false},
		{"older run", nil, reason, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, "steady")
			exported := exportedRun(t, e)
			files := []string{runs.FileServerSummary, runs.FileStatsJSONL}
			if c.notices != nil {
				files = append(files, runs.FileNotices)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(exported, f))
				if err != nil {
					t.Fatal(err)
				}
				if f == runs.FileNotices {
					b = c.notices(b)
				}
				if err := os.WriteFile(filepath.Join(e.runDir(), f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			resp := e.one(t, e.client(t), map[string]any{"queryType": "summary", "run": e.runID})
			if resp.Error != nil {
				t.Fatal(resp.Error)
			}
			var found *data.Notice
			for _, f := range resp.Frames {
				if f.Meta == nil {
					continue
				}
				for i, n := range f.Meta.Notices {
					if strings.Contains(n.Text, c.want) {
						found = &f.Meta.Notices[i]
					}
				}
			}
			switch {
			case c.wantNone && found != nil:
				t.Errorf("a run without notices.json shows %q", found.Text)
			case !c.wantNone && found == nil:
				t.Errorf("no notice %q in:\n%s", c.want, noticeTexts(resp))
			case !c.wantNone && found.Severity != c.sev:
				t.Errorf("notice %q has severity %v, want %v", found.Text, found.Severity, c.sev)
			}
		})
	}
}
