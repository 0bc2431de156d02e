package runs

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Default trims of a ladder step's steady window (ladder-steps.md): a rate
// change reaches the load generator within ~10 s and new users warm up
// first; the last seconds before the next step are left out too.
const (
	DefaultLadderTrimStartS = 30
	DefaultLadderTrimEndS   = 5
)

// maxLogLine bounds one line of logs.txt; a longer line (a stack dump with
// no newline) is skipped, never a read error.
const maxLogLine = 1 << 20

var (
	logTimeRe      = regexp.MustCompile(`\[(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2}),(\d{3})\]`)
	ladderStepRe   = regexp.MustCompile(`Ladder step (\d+)/(\d+): (.*)$`)
	ladderDoneRe   = regexp.MustCompile(`Ladder complete after `)
	ladderFieldsRe = regexp.MustCompile(`(\w+)=(\S+)`)
)

// LadderStep is one step as its start line tells it. Times are Unix
// milliseconds (the log's precision).
type LadderStep struct {
	Number, Of int64
	Users      int64
	// TargetRPS is the pacing target (0 = unpaced); nil when the line said
	// `unchanged` and no earlier step set one.
	TargetRPS *float64
	StartMs   int64
	// EndMs is where the next step starts or the ladder completed; nil when
	// the step has no end (the run stopped inside it).
	EndMs *int64
}

// Ladder is the ladder of one run as read from logs.txt. No ladder lines
// at all gives a Ladder with no Steps and no Notices (not a ladder run).
type Ladder struct {
	Steps []LadderStep
	// CompleteMs is the time of `Ladder complete` (nil: not seen).
	CompleteMs *int64
	Notices    []string
}

// ladderLine is one recognised line.
type ladderLine struct {
	ms       int64
	done     bool
	num, of  int64
	users    int64
	target   *float64
	targetOK bool // target_rps given as a number (not `unchanged`)
}

// ReadLadder reads the ladder lines of logs.txt. loc is the zone of the
// log's timestamps (nil = UTC). Lines that are not ladder lines are noise;
// a ladder line that cannot be read is skipped with a notice. When the log
// holds several ladders (a master restart), the last sequence that starts
// at `step 1/` is used, with a notice. The error is only a read error.
func ReadLadder(r io.Reader, loc *time.Location) (Ladder, error) {
	if loc == nil {
		loc = time.UTC
	}
	var (
		lines   []ladderLine
		notices []string
	)
	br := bufio.NewReaderSize(r, 64<<10)
	for num := 1; ; num++ {
		raw, err := readLogLine(br)
		if len(raw) > 0 {
			l, ok, why := parseLadderLine(raw, loc)
			switch {
			case ok:
				lines = append(lines, l)
			case why != "":
				notices = append(notices, fmt.Sprintf("logs.txt line %d: %s; line skipped", num, why))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Ladder{}, fmt.Errorf("reading %s line %d: %w", FileLogs, num, err)
		}
	}
	return assembleLadder(lines, notices), nil
}

// readLogLine returns the next line without its terminator; a line longer
// than maxLogLine comes back empty (skipped).
func readLogLine(br *bufio.Reader) (string, error) {
	var b []byte
	long := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			if len(b)+len(chunk) > maxLogLine {
				long, b = true, nil
			} else {
				b = append(b, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if long {
			b = nil
		}
		return strings.TrimRight(string(b), "\r\n"), err
	}
}

// parseLadderLine recognises a step or completion line. ok false with an
// empty why is noise.
func parseLadderLine(s string, loc *time.Location) (l ladderLine, ok bool, why string) {
	step := ladderStepRe.FindStringSubmatchIndex(s)
	done := step == nil && ladderDoneRe.MatchString(s)
	if step == nil && !done {
		return l, false, ""
	}
	tm := logTimeRe.FindStringSubmatch(s)
	if tm == nil {
		return l, false, "ladder line without a [YYYY-MM-DD HH:MM:SS,mmm] time"
	}
	ms, err := logTime(tm, loc)
	if err != nil {
		return l, false, err.Error()
	}
	l.ms = ms
	if done {
		l.done = true
		return l, true, ""
	}
	if l.num, err = strconv.ParseInt(s[step[2]:step[3]], 10, 64); err != nil || l.num < 1 {
		return l, false, fmt.Sprintf("ladder step number %q", s[step[2]:step[3]])
	}
	if l.of, err = strconv.ParseInt(s[step[4]:step[5]], 10, 64); err != nil || l.of < 1 {
		return l, false, fmt.Sprintf("ladder step count %q", s[step[4]:step[5]])
	}
	fields := map[string]string{}
	for _, m := range ladderFieldsRe.FindAllStringSubmatch(s[step[6]:step[7]], -1) {
		fields[m[1]] = m[2]
	}
	u, has := fields["users"]
	if !has {
		return l, false, "ladder step line without users="
	}
	users, err := ParsePyFloat(u)
	if err != nil || users < 0 || users != float64(int64(users)) || users > 1e15 {
		return l, false, fmt.Sprintf("ladder step users=%q is not a count", u)
	}
	l.users = int64(users)
	if t, has := fields["target_rps"]; has && t != "unchanged" {
		v, err := ParsePyFloat(t)
		if err != nil || v < 0 {
			return l, false, fmt.Sprintf("ladder step target_rps=%q is not a rate", t)
		}
		l.target, l.targetOK = &v, true
	}
	return l, true, ""
}

// logTime is the Unix millisecond of a matched `[YYYY-MM-DD HH:MM:SS,mmm]`.
func logTime(m []string, loc *time.Location) (int64, error) {
	var n [7]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	if n[1] < 1 || n[1] > 12 || n[2] < 1 || n[3] > 23 || n[4] > 59 || n[5] > 59 ||
		n[2] > time.Date(n[0], time.Month(n[1])+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return 0, fmt.Errorf("ladder line time %q is not a valid time", m[0])
	}
	t := time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], n[6]*int(time.Millisecond), loc)
	return t.UnixMilli(), nil
}

// assembleLadder picks the sequence to use and sets each step's end.
func assembleLadder(lines []ladderLine, notices []string) Ladder {
	if len(lines) == 0 {
		return Ladder{Notices: notices}
	}
	starts := 0
	from := 0
	for i, l := range lines {
		if !l.done && l.num == 1 {
			starts++
			from = i
		}
	}
	if starts == 0 {
		from = 0
	}
	if starts > 1 {
		notices = append(notices, fmt.Sprintf("logs.txt holds %d ladders (the master restarted?); the last one is used", starts))
	}
	var lad Ladder
	var target *float64
	for _, l := range lines[from:] {
		if l.done {
			if lad.CompleteMs == nil && len(lad.Steps) > 0 {
				ms := l.ms
				lad.CompleteMs = &ms
			}
			continue
		}
		if lad.CompleteMs != nil {
			// A step line after completion without a new `step 1/` cannot
			// belong to this ladder.
			notices = append(notices, fmt.Sprintf("ladder step %d/%d after the ladder completed; ignored", l.num, l.of))
			continue
		}
		if l.targetOK {
			v := *l.target
			target = &v
		}
		st := LadderStep{Number: l.num, Of: l.of, Users: l.users, StartMs: l.ms}
		if target != nil {
			v := *target
			st.TargetRPS = &v
		}
		if n := len(lad.Steps); n > 0 {
			end := l.ms
			lad.Steps[n-1].EndMs = &end
		}
		lad.Steps = append(lad.Steps, st)
	}
	if n := len(lad.Steps); n > 0 && lad.CompleteMs != nil {
		end := *lad.CompleteMs
		lad.Steps[n-1].EndMs = &end
	}
	lad.Notices = notices
	return lad
}

// StepWindow is the steady window (A, B] of a step in Unix seconds, or why
// the step is skipped.
type StepWindow struct {
	A, B    int64
	Skipped string // non-empty: the step has no window (the notice)
}

// Window is the step's steady window: A = ceil(start + trimStart),
// B = floor(end − trimEnd); skipped when the step has no end or B <= A.
func (s LadderStep) Window(trimStartS, trimEndS int64) StepWindow {
	if s.EndMs == nil {
		return StepWindow{Skipped: fmt.Sprintf("ladder step %d/%d has no end (the run stopped inside it); skipped", s.Number, s.Of)}
	}
	a := ceilDiv(s.StartMs+trimStartS*1000, 1000)
	b := floorDiv(*s.EndMs-trimEndS*1000, 1000)
	if b <= a {
		return StepWindow{A: a, B: b, Skipped: fmt.Sprintf("ladder step %d/%d lasted %.3f s, shorter than the %d s + %d s trim; skipped",
			s.Number, s.Of, float64(*s.EndMs-s.StartMs)/1000, trimStartS, trimEndS)}
	}
	return StepWindow{A: a, B: b}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
