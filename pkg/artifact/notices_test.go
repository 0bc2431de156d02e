package artifact

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/substrate/density/pkg/harvest"
)

func TestNoticesRoundTrip(t *testing.T) {
	ns := []Notice{
		{Block: "node_psi", Field: "cpu_stall_pct", Severity: SeverityWarning, Text: "null: the read failed: connection refused"},
		{Severity: SeverityInfo, Text: "steady window = run window: no samples \u00e9"},
	}
	b, err := NoticesJSON(ns)
	if err != nil {
		t.Fatal(err)
	}
	want := `[
  {
    "block": "node_psi",
    "field": "cpu_stall_pct",
    "severity": "warning",
    "text": "null: the read failed: connection refused"
  },
  {
    "block": "",
    "field": "",
    "severity": "info",
    "text": "steady window = run window: no samples \u00e9"
  }
]
`
	if string(b) != want {
		t.Errorf("NoticesJSON:\n%s\nwant\n%s", b, want)
	}
	got, err := ReadNotices(b)
	if err != nil || !reflect.DeepEqual(got, ns) {
		t.Errorf("ReadNotices = %+v, %v; want %+v", got, err, ns)
	}
	if b, _ := NoticesJSON(nil); string(b) != "[]\n" {
		t.Errorf("no notices: %q, want []", b)
	}
}

func TestReadNoticesMalformed(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"not JSON", `[{"block": `, "invalid JSON"},
		{"object", `{"block": "x"}`, "want a list"},
		{"missing key", `[{"block": "", "field": "", "severity": "info"}]`, `[0]: missing key "text"`},
		{"unknown key", `[{"block": "", "field": "", "severity": "info", "text": "t", "x": 1}]`, `unknown key "x"`},
		{"number", `[{"block": 1, "field": "", "severity": "info", "text": "t"}]`, "[0].block: want a string"},
		{"severity", `[{"block": "", "field": "", "severity": "fatal", "text": "t"}]`, `"fatal"`},
		{"empty text", `[{"block": "", "field": "", "severity": "info", "text": ""}]`, "[0].text: empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadNotices([]byte(c.doc))
			if !errors.Is(err, ErrNotices) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want ErrNotices saying %q", err, c.want)
			}
		})
	}
}

func TestHarvestNoticesSeverity(t *testing.T) {
	for _, c := range []struct {
		n    harvest.Notice
		want string
	}{
		{harvest.Notice{Block: harvest.BlockNodePSI, Kind: harvest.ReadFailed, Reason: "r"}, SeverityWarning},
		{harvest.Notice{Block: harvest.BlockPacking, Kind: harvest.Absent, Reason: "r"}, SeverityWarning},
		{harvest.Notice{Block: harvest.BlockOOM, Field: "evicted", Reason: "null: unknown"}, SeverityWarning},
		{harvest.Notice{Reason: "young run"}, SeverityInfo},
		{harvest.Notice{Block: harvest.BlockPacking, Kind: harvest.Stored, Reason: "source"}, SeverityInfo},
	} {
		got := HarvestNotices([]harvest.Notice{c.n})
		if len(got) != 1 || got[0].Severity != c.want || got[0].Block != c.n.Block || got[0].Field != c.n.Field || got[0].Text != c.n.Reason {
			t.Errorf("%+v: %+v, want severity %s", c.n, got, c.want)
		}
	}
}
