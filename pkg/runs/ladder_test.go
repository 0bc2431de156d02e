package runs

import (
	"strings"
	"testing"
	"time"
)

const ladderLog = `[locust] [2026-09-23 09:59:58,001] master-0/INFO/locust.main: Starting Locust 2.31
[locust] [2026-09-23 10:00:05,123] master-0/INFO/locust.shape: Ladder step 1/4: users=100 trace_probability=unchanged target_rps=500.0
[worker] [2026-09-23 10:00:06,000] worker-1/WARNING/root: resume failed: deadline exceeded
[locust] [2026-09-23 10:05:05,123] master-0/INFO/locust.shape: Ladder step 2/4: users=200 trace_probability=unchanged target_rps=unchanged
[locust] [2026-09-23 10:10:05,500] master-0/INFO/locust.shape: Ladder step 3/4: users=300 trace_probability=0.1 target_rps=1500
[locust] [2026-09-23 10:10:40,000] master-0/INFO/locust.shape: Ladder step 4/4: users=400 trace_probability=unchanged target_rps=0
[locust] [2026-09-23 10:15:40,999] master-0/INFO/locust.shape: Ladder complete after 935s
`

func ms(s string) int64 {
	t, err := time.Parse("2006-01-02 15:04:05.000", s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func TestReadLadder(t *testing.T) {
	lad, err := ReadLadder(strings.NewReader(ladderLog), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lad.Notices) != 0 {
		t.Fatalf("notices %q", lad.Notices)
	}
	if len(lad.Steps) != 4 {
		t.Fatalf("%d steps", len(lad.Steps))
	}
	want := []struct {
		users      int64
		target     float64
		start, end string
	}{
		{100, 500, "2026-09-23 10:00:05.123", "2026-09-23 10:05:05.123"},
		{200, 500, "2026-09-23 10:05:05.123", "2026-09-23 10:10:05.500"},
		{300, 1500, "2026-09-23 10:10:05.500", "2026-09-23 10:10:40.000"},
		{400, 0, "2026-09-23 10:10:40.000", "2026-09-23 10:15:40.999"},
	}
	for i, w := range want {
		s := lad.Steps[i]
		if s.Number != int64(i+1) || s.Of != 4 || s.Users != w.users || s.TargetRPS == nil || *s.TargetRPS != w.target ||
			s.StartMs != ms(w.start) || s.EndMs == nil || *s.EndMs != ms(w.end) {
			t.Errorf("step %d = %+v", i+1, s)
		}
	}
	w := lad.Steps[0].Window(DefaultLadderTrimStartS, DefaultLadderTrimEndS)
	if w.Skipped != "" || w.A != ms("2026-09-23 10:00:36.000")/1000 || w.B != ms("2026-09-23 10:05:00.000")/1000 {
		t.Errorf("window 1 = %+v", w)
	}
	// Step 3: A = ceil(10:10:35.5) = :36, B = floor(10:10:35) = :35, empty.
	if w := lad.Steps[2].Window(DefaultLadderTrimStartS, DefaultLadderTrimEndS); w.Skipped == "" {
		t.Errorf("window 3 = %+v, want skipped", w)
	}
}

func TestReadLadderEdges(t *testing.T) {
	line := func(ts, rest string) string {
		return "[locust] [" + ts + "] master-0/INFO/locust.shape: " + rest + "\n"
	}
	cases := []struct {
		name    string
		log     string
		steps   int
		notices int
		check   func(t *testing.T, l Ladder)
	}{
		{name: "no ladder lines", log: "[x] [2026-01-01 00:00:00,000] hello\nnoise\n"},
		{name: "empty", log: ""},
		{name: "no end", log: line("2026-01-01 00:00:00,000", "Ladder step 1/2: users=1 target_rps=unchanged") +
			line("2026-01-01 00:05:00,000", "Ladder step 2/2: users=2 target_rps=10"), steps: 2,
			check: func(t *testing.T, l Ladder) {
				if l.Steps[0].TargetRPS != nil || l.Steps[1].EndMs != nil || l.CompleteMs != nil {
					t.Errorf("%+v", l)
				}
				if w := l.Steps[1].Window(30, 5); w.Skipped == "" {
					t.Errorf("step without end not skipped")
				}
			}},
		{name: "restart uses the last ladder", log: line("2026-01-01 00:00:00,000", "Ladder step 1/2: users=1 target_rps=5") +
			line("2026-01-01 00:01:00,000", "Ladder step 2/2: users=2 target_rps=unchanged") +
			line("2026-01-01 00:02:00,000", "Ladder step 1/2: users=3 target_rps=unchanged") +
			line("2026-01-01 00:03:00,000", "Ladder complete after 60s"), steps: 1, notices: 1,
			check: func(t *testing.T, l Ladder) {
				if l.Steps[0].Users != 3 || l.Steps[0].TargetRPS != nil || *l.Steps[0].EndMs != ms("2026-01-01 00:03:00.000") {
					t.Errorf("%+v", l.Steps[0])
				}
			}},
		{name: "bad lines skipped with notices", log: "Ladder step 1/2: users=1 target_rps=5\n" +
			line("2026-13-01 00:00:00,000", "Ladder step 1/2: users=1") +
			line("2026-01-01 00:00:00,000", "Ladder step 1/2: users=x target_rps=1") +
			line("2026-01-01 00:00:00,000", "Ladder step 1/2: target_rps=1") +
			line("2026-01-01 00:00:00,000", "Ladder step 1/2: users=2 target_rps=-1") +
			line("2026-01-01 00:00:00,000", "Ladder step 1/2: users=2.5"), notices: 6},
		{name: "CRLF and first time wins", log: "[a] [2026-01-01 00:00:00,250] [2026-01-01 00:00:09,000] Ladder step 1/1: users=7 target_rps=2.5\r\n" +
			"[a] [2026-01-01 00:01:00,000] Ladder complete after 60s\r\n", steps: 1,
			check: func(t *testing.T, l Ladder) {
				s := l.Steps[0]
				if s.StartMs != ms("2026-01-01 00:00:00.250") || *s.TargetRPS != 2.5 || s.Users != 7 {
					t.Errorf("%+v", s)
				}
				if w := s.Window(30, 5); w.A != ms("2026-01-01 00:00:31.000")/1000 || w.B != ms("2026-01-01 00:00:55.000")/1000 {
					t.Errorf("%+v", w)
				}
			}},
		{name: "step after completion ignored", log: line("2026-01-01 00:00:00,000", "Ladder step 1/1: users=1 target_rps=1") +
			line("2026-01-01 00:01:00,000", "Ladder complete after 60s") +
			line("2026-01-01 00:02:00,000", "Ladder step 2/2: users=1 target_rps=1"), steps: 1, notices: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := ReadLadder(strings.NewReader(c.log), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Steps) != c.steps || len(l.Notices) != c.notices {
				t.Fatalf("steps %d notices %q", len(l.Steps), l.Notices)
			}
			if c.check != nil {
				c.check(t, l)
			}
		})
	}
}

func TestReadLadderZone(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	l, err := ReadLadder(strings.NewReader("[2026-07-01 12:00:00,000] Ladder step 1/1: users=1 target_rps=1\n"), loc)
	if err != nil || len(l.Steps) != 1 {
		t.Fatal(l, err)
	}
	if l.Steps[0].StartMs != ms("2026-07-01 10:00:00.000") {
		t.Errorf("start %d", l.Steps[0].StartMs)
	}
}

func TestStepWindowTrim(t *testing.T) {
	end := int64(100_000)
	cases := []struct {
		start, end int64
		ts, te     int64
		a, b       int64
		skipped    bool
	}{
		{0, end, 30, 5, 30, 95, false},
		{1, end, 30, 5, 31, 95, false},
		{0, 34_999, 30, 5, 30, 29, true},
		{0, 35_000, 30, 5, 30, 30, true},
		{0, 36_000, 30, 5, 30, 31, false},
		{-1500, 10_000, 0, 0, -1, 10, false},
	}
	for _, c := range cases {
		e := c.end
		w := LadderStep{Number: 1, Of: 1, StartMs: c.start, EndMs: &e}.Window(c.ts, c.te)
		if w.A != c.a || w.B != c.b || (w.Skipped != "") != c.skipped {
			t.Errorf("%+v → %+v", c, w)
		}
	}
}
