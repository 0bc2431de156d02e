package artifact

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sp(s string) *string { return &s }

func serverRow(ts, tag, test string, packing any) Row {
	return Row{Timestamp: ts, Tag: tag, TestName: test, Metric: MetricServerSummary,
		Measurements: Object{{"cluster_packing_p50", packing}, {"oom_events_node", nil}}}
}

func TestRowMarshalLine(t *testing.T) {
	f := 0.8
	r := Row{Timestamp: "2024-01-02T03:04:05Z", Tag: "abc123", TestName: "density", Metric: MetricServerSummary,
		Measurements: Object{
			{"cluster_packing_p50", FloatMeasurement(&f)},
			{"checkpoints_in_window", IntMeasurement(func() *int64 { v := int64(50); return &v }())},
			{"restore_p50_s", FloatMeasurement(nil)},
			{"machine_type", stringMeasurement(sp("n2-standard-8"))},
			{"sandbox_class", stringMeasurement(nil)},
			{"p", sp("<é>")},
			{"q", (*string)(nil)},
		}}
	got, err := r.MarshalLine()
	want := `{"timestamp": "2024-01-02T03:04:05Z", "tag": "abc123", "test_name": "density", "metric": "server_summary", ` +
		`"measurements": {"cluster_packing_p50": "0.8", "checkpoints_in_window": "50", "restore_p50_s": null, ` +
		`"machine_type": "n2-standard-8", "sandbox_class": null, "p": "<\u00e9>", "q": null}}`
	if err != nil || string(got) != want {
		t.Fatalf("MarshalLine =\n%s (%v)\nwant\n%s", got, err, want)
	}
	empty, err := Row{Timestamp: "t", Metric: "m"}.MarshalLine()
	if err != nil || string(empty) != `{"timestamp": "t", "tag": "", "test_name": "", "metric": "m", "measurements": {}}` {
		t.Errorf("empty measurements: %s %v", empty, err)
	}
	for name, bad := range map[string]Row{
		"float value":  {Metric: "m", Measurements: Object{{"a", 0.8}}},
		"int value":    {Metric: "m", Measurements: Object{{"a", 3}}},
		"nested value": {Metric: "m", Measurements: Object{{"a", Object{}}}},
		"no metric":    {},
	} {
		if out, err := bad.MarshalLine(); err == nil {
			t.Errorf("%s: no error, wrote %s", name, out)
		}
	}
}

func TestMeasurementHelpers(t *testing.T) {
	tests := []struct {
		got, want any
	}{
		{FloatMeasurement(func() *float64 { x := 2.0; return &x }()), "2.0"},
		{FloatMeasurement(func() *float64 { x := 1e-05; return &x }()), "1e-05"},
		{FloatMeasurement(func() *float64 { x := math.NaN(); return &x }()), nil},
		{FloatMeasurement(func() *float64 { x := math.Inf(1); return &x }()), nil},
		{FloatMeasurement(nil), nil},
		{IntMeasurement(func() *int64 { x := int64(-3); return &x }()), "-3"},
		{IntMeasurement(nil), nil},
		{stringMeasurement(sp("")), ""},
		{stringMeasurement(nil), nil},
	}
	for i, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("#%d: %#v want %#v", i, tc.got, tc.want)
		}
	}
}

func TestParseRow(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Row
		err  error
	}{
		{"ours", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "trial_summary", "measurements": {"a": "1", "b": null}}`,
			&Row{"T", "g", "n", "trial_summary", Object{{"a", "1"}, {"b", nil}}}, nil},
		{"keys in another order, CR, spaces", " {\"metric\":\"m\",\"measurements\":{},\"test_name\":\"n\",\"tag\":\"g\",\"timestamp\":\"T\"}\r",
			&Row{"T", "g", "n", "m", Object{}}, nil},
		{"foreign numeric measurement kept", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "locust", "measurements": {"rps": 12.5}}`,
			&Row{"T", "g", "n", "locust", Object{{"rps", 12.5}}}, nil},
		{"blank", "  \t", nil, ErrBlankLine},
		{"empty", "", nil, ErrBlankLine},
		{"not json", `{"timestamp": `, nil, ErrInvalidJSON},
		{"array", `[1]`, nil, ErrNotRow},
		{"extra key", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "m", "measurements": {}, "x": 1}`, nil, ErrNotRow},
		{"missing key", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "m"}`, nil, ErrNotRow},
		{"duplicate key hides a missing one", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "m", "metric": "m"}`, nil, ErrNotRow},
		{"number tag", `{"timestamp": "T", "tag": 1, "test_name": "n", "metric": "m", "measurements": {}}`, nil, ErrNotRow},
		{"list measurements", `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "m", "measurements": []}`, nil, ErrNotRow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRow([]byte(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) || got != nil {
					t.Fatalf("got %+v, %v; want error %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, _ := Marshal(got.Object())
			b, _ := Marshal(tc.want.Object())
			if string(a) != string(b) {
				t.Errorf("got %s want %s", a, b)
			}
		})
	}
}

func TestReadRows(t *testing.T) {
	good := `{"timestamp": "T", "tag": "g", "test_name": "n", "metric": "m", "measurements": {}}`
	in := good + "\n" + "garbage {\n" + "\n" + good + "\r\n" + `{"timestamp": "T", "ta`
	lines, err := ReadRows(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		raw  string
		term bool
		ok   bool
		err  error
	}
	wants := []want{
		{good, true, true, nil},
		{"garbage {", true, false, ErrInvalidJSON},
		{"", true, false, ErrBlankLine},
		{good + "\r", true, true, nil},
		{`{"timestamp": "T", "ta`, false, false, ErrInvalidJSON},
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d lines, want %d", len(lines), len(wants))
	}
	var rebuilt bytes.Buffer
	for i, w := range wants {
		l := lines[i]
		if l.Num != i+1 || string(l.Raw) != w.raw || l.Terminated != w.term || (l.Row != nil) != w.ok {
			t.Errorf("line %d: %+v", i+1, l)
		}
		if w.err != nil && !errors.Is(l.Err, w.err) {
			t.Errorf("line %d: err %v want %v", i+1, l.Err, w.err)
		}
		rebuilt.Write(l.Raw)
		if l.Terminated {
			rebuilt.WriteByte('\n')
		}
	}
	if rebuilt.String() != in {
		t.Error("lines do not reassemble the input byte for byte")
	}
	if lines, err := ReadRows(strings.NewReader("")); err != nil || len(lines) != 0 {
		t.Errorf("empty input: %v %v", lines, err)
	}
}

func TestAppendRows(t *testing.T) {
	ctx := context.Background()
	row := serverRow("T", "g", "n", "0.5")
	line, _ := row.MarshalLine()
	tests := []struct {
		name     string
		existing *string // nil: no file
		want     string
	}{
		{"creates the file", nil, string(line) + "\n"},
		{"empty file", sp(""), string(line) + "\n"},
		{"after a complete line", sp("{\"x\": 1}\n"), "{\"x\": 1}\n" + string(line) + "\n"},
		{"after a half-written line: terminated, not altered", sp("{\"x\": 1}\n{\"half"), "{\"x\": 1}\n{\"half\n" + string(line) + "\n"},
		{"after blank lines and CRLF", sp("a\r\n\n"), "a\r\n\n" + string(line) + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stats.jsonl")
			if tc.existing != nil {
				if err := os.WriteFile(path, []byte(*tc.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := AppendRows(ctx, path, row); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tc.want)
			}
			fi, _ := os.Stat(path)
			if wantMode := map[bool]os.FileMode{true: 0o600, false: 0o644}[tc.existing != nil]; fi.Mode().Perm() != wantMode {
				t.Errorf("mode %v want %v", fi.Mode().Perm(), wantMode)
			}
		})
	}
	t.Run("two rows in one call, then a second call", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		trial := Row{Timestamp: "T", Tag: "g", TestName: "n", Metric: MetricTrialSummary, Measurements: Object{{"node_count", "3"}}}
		if err := AppendRows(ctx, path, row, trial); err != nil {
			t.Fatal(err)
		}
		if err := AppendRows(ctx, path, row); err != nil {
			t.Fatal(err)
		}
		tl, _ := trial.MarshalLine()
		got, _ := os.ReadFile(path)
		if want := string(line) + "\n" + string(tl) + "\n" + string(line) + "\n"; string(got) != want {
			t.Errorf("file =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("an encoding error writes nothing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		os.WriteFile(path, []byte("keep\n"), 0o644)
		bad := Row{Metric: "m", Measurements: Object{{"x", 1.5}}}
		if err := AppendRows(ctx, path, row, bad); err == nil {
			t.Fatal("no error")
		}
		if got, _ := os.ReadFile(path); string(got) != "keep\n" {
			t.Errorf("file changed: %q", got)
		}
	})
	t.Run("no rows: no file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		if err := AppendRows(ctx, path); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("file created: %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		err := AppendRows(ctx, filepath.Join(t.TempDir(), "nope", "stats.jsonl"), row)
		if err == nil || !strings.Contains(err.Error(), "stats.jsonl") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cancelled while another writer holds the lock", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		holder, err := openLocked(ctx, path, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer closeLocked(holder)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := AppendRows(cctx, path, row); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if got, _ := os.ReadFile(path); len(got) != 0 {
			t.Errorf("wrote %q while locked out", got)
		}
	})
}

func TestReplaceRows(t *testing.T) {
	ctx := context.Background()
	mk := func(metric, ts, tag, test, v string) string {
		l, err := Row{Timestamp: ts, Tag: tag, TestName: test, Metric: metric, Measurements: Object{{"v", v}}}.MarshalLine()
		if err != nil {
			t.Fatal(err)
		}
		return string(l)
	}
	oldS := mk(MetricServerSummary, "T1", "g", "n", "old")
	oldT := mk(MetricTrialSummary, "T1", "g", "n", "old")
	otherRun := mk(MetricServerSummary, "T2", "g", "n", "other")
	otherTag := mk(MetricServerSummary, "T1", "h", "n", "other")
	foreign := mk("locust_summary", "T1", "g", "n", "foreign")
	newS := mk(MetricServerSummary, "T1", "g", "n", "new")
	newT := mk(MetricTrialSummary, "T1", "g", "n", "new")
	rows := []Row{
		{Timestamp: "T1", Tag: "g", TestName: "n", Metric: MetricServerSummary, Measurements: Object{{"v", "new"}}},
		{Timestamp: "T1", Tag: "g", TestName: "n", Metric: MetricTrialSummary, Measurements: Object{{"v", "new"}}},
	}
	tests := []struct {
		name     string
		existing string
		want     string
		matched  int
	}{
		{"replaced in place, others byte for byte",
			foreign + "\n" + oldS + "\n" + oldT + "\n" + otherRun + "\n",
			foreign + "\n" + newS + "\n" + newT + "\n" + otherRun + "\n", 2},
		{"two earlier exports collapse to one pair at the first position",
			oldS + "\n" + otherTag + "\n" + oldT + "\n" + "corrupt{\n" + oldS + "\n" + oldT + "\n",
			newS + "\n" + newT + "\n" + otherTag + "\n" + "corrupt{\n", 4},
		{"no match appends",
			otherRun + "\n" + "  \n", otherRun + "\n" + "  \n" + newS + "\n" + newT + "\n", 0},
		{"no match after a half line terminates it",
			otherRun + "\n{\"half", otherRun + "\n{\"half\n" + newS + "\n" + newT + "\n", 0},
		{"match on an unterminated last line",
			otherRun + "\n" + oldS, otherRun + "\n" + newS + "\n" + newT + "\n", 1},
		{"kept lines after the insertion keep their bytes, CRLF and missing final newline included",
			oldS + "\r\n" + "x\r\n" + otherRun, newS + "\n" + newT + "\n" + "x\r\n" + otherRun, 1},
		{"empty file", "", newS + "\n" + newT + "\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "stats.jsonl")
			if err := os.WriteFile(path, []byte(tc.existing), 0o640); err != nil {
				t.Fatal(err)
			}
			n, err := ReplaceRows(ctx, path, matchRun("T1", "g", "n"), rows...)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tc.want || n != tc.matched {
				t.Errorf("matched %d (want %d), file =\n%s\nwant\n%s", n, tc.matched, got, tc.want)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("leftover files: %v", entries)
			}
		})
	}
	t.Run("missing file is created", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		if _, err := ReplaceRows(ctx, path, matchRun("T1", "g", "n"), rows...); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != newS+"\n"+newT+"\n" {
			t.Errorf("file = %s", got)
		}
	})
	t.Run("encoding error leaves the file alone", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stats.jsonl")
		os.WriteFile(path, []byte(oldS+"\n"), 0o644)
		if _, err := ReplaceRows(ctx, path, matchRun("T1", "g", "n"), Row{}); err == nil {
			t.Fatal("no error")
		}
		if got, _ := os.ReadFile(path); string(got) != oldS+"\n" {
			t.Errorf("file changed: %s", got)
		}
	})
}

// matchRun must find rows whose strings held bytes that are not UTF-8 (a tag
// from the command line), though they read back lossily.
func TestMatchRunNonUTF8(t *testing.T) {
	r := serverRow("T", "tag\xff", "n", "1")
	line, err := r.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	if !matchRun("T", "tag\xff", "n")(line) {
		t.Error("own row with a non-UTF-8 tag not matched")
	}
	if matchRun("T", "tag", "n")(line) {
		t.Error("matched a different tag")
	}
}

// linkedRunDir lays out root/secret.txt (0600) and root/b/stats.jsonl, a
// symbolic link to ../secret.txt, as the security review did.
func linkedRunDir(t *testing.T) (root, link string, secret []byte) {
	t.Helper()
	root = t.TempDir()
	secret = []byte("-----BEGIN KEY-----\nTOPSECRET\n")
	if err := os.WriteFile(filepath.Join(root, "secret.txt"), secret, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(root, "b", "stats.jsonl")
	if err := os.Symlink("../secret.txt", link); err != nil {
		t.Fatal(err)
	}
	return root, link, secret
}

// checkLinkUntouched fails unless the secret is unchanged, the link is
// still the only entry of b/ and still a link, and no file of b/ holds the
// secret's bytes.
func checkLinkUntouched(t *testing.T, root, link string, secret []byte) {
	t.Helper()
	if got, _ := os.ReadFile(filepath.Join(root, "secret.txt")); !bytes.Equal(got, secret) {
		t.Errorf("secret.txt changed: %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("stats.jsonl is no longer the link: %v %v", fi, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(link))
	if len(entries) != 1 {
		t.Errorf("files written in the run directory: %v", entries)
	}
}

// A stats.jsonl that is a symbolic link is never appended through nor
// copied by a replace (export.md, "Credentials and hosts").
func TestRowsRefuseSymlinkedFile(t *testing.T) {
	rows := []Row{serverRow("2024-01-02T03:04:05Z", "t", "density", "0.5")}
	for name, write := range map[string]func(path string) error{
		"append": func(p string) error { return AppendRows(context.Background(), p, rows...) },
		"replace": func(p string) error {
			_, err := ReplaceRows(context.Background(), p, func([]byte) bool { return false }, rows...)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			root, link, secret := linkedRunDir(t)
			err := write(link)
			var se *SymlinkError
			if !errors.Is(err, ErrSymlink) || !errors.As(err, &se) || se.Path != link {
				t.Fatalf("err = %v, want a *SymlinkError naming %s", err, link)
			}
			checkLinkUntouched(t, root, link, secret)
		})
	}
}

// The run directory itself may be a symbolic link.
func TestRowsThroughLinkedRunDir(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, "run")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "run", "stats.jsonl")
	row := serverRow("2024-01-02T03:04:05Z", "t", "density", "0.5")
	if err := AppendRows(context.Background(), path, row); err != nil {
		t.Fatal(err)
	}
	if _, err := ReplaceRows(context.Background(), path, func([]byte) bool { return true }, row); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(root, "run", "server_summary.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := readFileNoFollow(filepath.Join(real, "stats.jsonl"))
	if err != nil || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("stats.jsonl %q, %v; want one row", b, err)
	}
	if err := RefuseSymlinksIn(filepath.Join(root, "run")); err != nil {
		t.Fatalf("a linked run directory holding regular files: %v", err)
	}
}
