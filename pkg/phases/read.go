package phases

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Stats counts what reading the logs saw.
type Stats struct {
	Lines         int // lines holding a '{' (array elements in a JSON array file)
	Undecodable   int // of those, not a JSON object (skipped)
	Records       int // timing breakdown records kept (both layers, failed included)
	Late          int // records dropped: time after the run's end + lag
	BadValues     int // phase values that are not finite numbers (dropped)
	PhasesDropped int // phases beyond MaxPhases in one record (dropped)
}

// Collector accumulates the records of several logs, in input order.
// Memory grows with the number of records, not with log bytes or line
// length. The zero value is not usable; use NewCollector.
type Collector struct {
	Stats
	Records []Record
	// Notices are for people (a JSON array file read line by line, ...).
	Notices []string

	notAfter    int64
	hasNotAfter bool
	intern      map[string]string
	cur         fields
	payload     fields
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{intern: map[string]string{}}
}

// Mark is a point Rollback returns to.
type Mark struct {
	stats            Stats
	records, notices int
}

// Mark returns the collector's current point.
func (c *Collector) Mark() Mark {
	return Mark{c.Stats, len(c.Records), len(c.Notices)}
}

// Rollback discards what was read since m (a log whose read failed half
// way is skipped whole). Notices are kept.
func (c *Collector) Rollback(m Mark) {
	c.Stats = m.stats
	clear(c.Records[m.records:])
	c.Records = c.Records[:m.records]
}

// ReadWhole reads one log like ReadLog, all or nothing: when the read
// fails half way, what it took from the log is discarded.
func (c *Collector) ReadWhole(r io.Reader, source string) error {
	m := c.Mark()
	if err := c.ReadLog(r, source); err != nil {
		c.Rollback(m)
		return err
	}
	return nil
}

// Report is what the reads noticed, for a person: the collector's notices,
// then the counts of what it dropped.
func (c *Collector) Report() []string {
	out := append([]string(nil), c.Notices...)
	if c.BadValues > 0 {
		out = append(out, fmt.Sprintf("%d phase value(s) were not finite numbers and were dropped", c.BadValues))
	}
	if c.PhasesDropped > 0 {
		out = append(out, fmt.Sprintf("%d phase(s) beyond %d in one record were dropped", c.PhasesDropped, MaxPhases))
	}
	if c.Late > 0 {
		out = append(out, fmt.Sprintf("%d record(s) after the run's end + atelet lag were dropped", c.Late))
	}
	return out
}

// DropAfter makes the collector drop records whose time is after us
// (microseconds since the epoch: the run's end + the atelet lag), so that a
// late export does not pick up the next run's records.
func (c *Collector) DropAfter(us int64) {
	c.notAfter, c.hasNotAfter = us, true
}

// str interns b, so that repeated values (uids, classes, phase names) share
// one string.
func (c *Collector) str(b []byte) string {
	if s, ok := c.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	c.intern[s] = s
	return s
}

// ReadLog reads one log (kubectl logs output with or without prefixes, JSON
// lines, a Cloud Logging export) and appends its records. source names it in
// the records. A log whose first non-blank byte is '[' and that is an
// io.Seeker is tried as one JSON array first, else read line by line with a
// notice. Only a read error is returned; bad content is counted.
func (c *Collector) ReadLog(r io.Reader, source string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if sk, ok := r.(io.Seeker); ok {
		start, err := sk.Seek(0, io.SeekCurrent)
		if err == nil && startsWithBracket(br) {
			done, err := c.readArray(br, source)
			if err != nil || done {
				return err
			}
			if _, err := sk.Seek(start, io.SeekStart); err != nil {
				return fmt.Errorf("rereading %s: %w", source, err)
			}
			br.Reset(r)
			c.Notices = append(c.Notices, fmt.Sprintf("%s starts with '[' but is not one JSON array; read line by line", source))
		}
	}
	return c.readLines(br, source)
}

func startsWithBracket(br *bufio.Reader) bool {
	for i := 1; ; i++ {
		p, err := br.Peek(i)
		if len(p) < i {
			return false
		}
		switch p[i-1] {
		case ' ', '\t', '\r', '\n':
			if err != nil {
				return false
			}
			continue
		case '[':
			return true
		}
		return false
	}
}

// readLines reads the log line by line.
func (c *Collector) readLines(br *bufio.Reader, source string) error {
	s := &scanner{br: br}
	for {
		s.eol = false
		found := s.findBrace()
		if s.ioErr != nil {
			return fmt.Errorf("reading %s: %w", source, s.ioErr)
		}
		if !found {
			if s.eol {
				continue
			}
			return nil // end of input
		}
		c.Lines++
		c.cur.reset()
		err := s.object(1, c.cur.member(c, s, &c.payload, true))
		if err == nil && !s.restOfLine() {
			err = errSyntax
		}
		if s.ioErr != nil {
			return fmt.Errorf("reading %s: %w", source, s.ioErr)
		}
		if err != nil {
			c.Undecodable++
			s.skipLine()
			if s.ioErr != nil {
				return fmt.Errorf("reading %s: %w", source, s.ioErr)
			}
			continue
		}
		c.add(&c.cur, source)
	}
}

// readArray reads a log that is one JSON array of entries. done is false
// when it is not valid JSON (nothing of it is kept then).
func (c *Collector) readArray(br *bufio.Reader, source string) (done bool, err error) {
	s := &scanner{br: br, multiline: true}
	_, _ = s.skipSpace() // the '[' startsWithBracket saw
	saved := *c
	saved.Records = c.Records[:len(c.Records):len(c.Records)]
	var entries []fields
	perr := s.array(1, func(b byte) error {
		c.Lines++
		if b != '{' {
			c.Undecodable++
			return s.skipValue(b, 1)
		}
		var f, p fields
		if err := s.object(2, f.member(c, s, &p, true)); err != nil {
			return err
		}
		if f.payload != nil {
			cp := *f.payload
			f.payload = &cp
		}
		entries = append(entries, f)
		return nil
	})
	if perr == nil {
		if _, ok := s.skipSpace(); ok {
			perr = errSyntax
		}
	}
	if s.ioErr != nil {
		return false, fmt.Errorf("reading %s: %w", source, s.ioErr)
	}
	if perr != nil {
		notices := c.Notices
		*c = saved
		c.Notices = notices
		return false, nil
	}
	for i := range entries {
		c.add(&entries[i], source)
	}
	return true, nil
}

// durVal is one duration key of a record as read.
type durVal struct {
	phase string
	value float64
	ok    bool
}

// Dimension keys of a record.
const (
	keyUID              = "ate.actor.uid"
	keyName             = "ate.actor.name"
	keyAtespace         = "ate.atespace"
	keyTemplateName     = "ate.template.name"
	keyTemplateAtespace = "ate.template.atespace"
	keyScope            = "ate.snapshot.scope"
	keyKind             = "ate.snapshot.kind"
	keyClass            = "ate.sandbox.class"
	keyError            = "error.type"
)

var dimKeys = [...]string{keyUID, keyName, keyAtespace, keyTemplateName, keyTemplateAtespace, keyScope, keyKind, keyClass}

// fields is one decoded object's keys of interest (the last of a duplicate
// key wins, as in Python's json).
type fields struct {
	msg        string
	hasMsg     bool
	time       string
	timeState  int // 0 absent, 1 a string, 2 not a string or too long
	timestamp  string
	hasStamp   bool
	dims       [len(dimKeys)]string
	failed     bool
	durs       [len(prefixes)][]durVal
	dropped    int
	payload    *fields
	hasPayload bool
}

func (f *fields) reset() {
	durs := f.durs
	*f = fields{}
	for i := range durs {
		f.durs[i] = durs[i][:0]
	}
}

// member returns the object member callback filling f; top allows the
// Cloud Logging envelope (jsonPayload, timestamp) and p is where the payload
// goes.
func (f *fields) member(c *Collector, s *scanner, p *fields, top bool) func(string, byte, bool) error {
	return func(key string, b byte, kept bool) error {
		if !kept {
			return errSkip
		}
		switch key {
		case "msg":
			k, err := s.value(b, 2)
			f.hasMsg = k == kindString
			if f.hasMsg {
				f.msg = c.str(s.buf)
			}
			return err
		case "time":
			k, err := s.value(b, 2)
			if k == kindString {
				f.timeState, f.time = 1, string(s.buf)
			} else {
				f.timeState, f.time = 2, ""
			}
			return err
		case keyError:
			f.failed = true
			return errSkip
		}
		if top {
			switch key {
			case "jsonPayload":
				if b != '{' {
					f.payload, f.hasPayload = nil, false
					return errSkip
				}
				p.reset()
				f.payload, f.hasPayload = p, true
				return s.object(3, p.member(c, s, nil, false))
			case "timestamp":
				k, err := s.value(b, 2)
				f.hasStamp = k == kindString
				f.timestamp = ""
				if f.hasStamp {
					f.timestamp = string(s.buf)
				}
				return err
			}
		}
		for i, dk := range dimKeys {
			if key == dk {
				k, err := s.value(b, 2)
				f.dims[i] = ""
				if k == kindString {
					f.dims[i] = c.str(s.buf)
				}
				return err
			}
		}
		for i := range prefixes {
			pre := prefixes[i].key
			if len(key) <= len(pre) || !strings.HasPrefix(key, pre) {
				continue
			}
			k, err := s.value(b, 2)
			if err != nil {
				return err
			}
			d := durVal{phase: key[len(pre):]}
			if k == kindNumber {
				d.value, d.ok = phaseValue(s.buf)
			}
			for j := range f.durs[i] {
				if f.durs[i][j].phase == d.phase {
					f.durs[i][j].value, f.durs[i][j].ok = d.value, d.ok
					return nil
				}
			}
			if len(f.durs[i]) >= MaxPhases {
				f.dropped++
				return nil
			}
			d.phase = c.str([]byte(d.phase))
			f.durs[i] = append(f.durs[i], d)
			return nil
		}
		return errSkip
	}
}

// add turns a decoded object into a record when it is one.
func (c *Collector) add(top *fields, source string) {
	f := top
	if top.hasPayload && top.payload != nil {
		f = top.payload
	}
	if !f.hasMsg || (f.msg != MsgRestore && f.msg != MsgCheckpoint) {
		return
	}
	win := -1
	for i := range prefixes {
		for _, d := range f.durs[i] {
			if d.ok {
				win = i
				break
			}
		}
		if win >= 0 {
			break
		}
	}
	if win < 0 {
		return
	}
	rec := Record{Layer: prefixes[win].layer, Op: prefixes[win].op, Pair: -1, Source: source, Failed: f.failed}
	switch {
	case f.timeState == 1:
		rec.Time, rec.HasTime = ParseTime(f.time)
	case f.timeState == 0 && f != top && top.hasStamp:
		rec.Time, rec.HasTime = ParseTime(top.timestamp)
	}
	if rec.HasTime && c.hasNotAfter && rec.Time > c.notAfter {
		c.Late++
		return
	}
	rec.UID, rec.Name, rec.Atespace = f.dims[0], f.dims[1], f.dims[2]
	rec.TemplateName, rec.TemplateAtespace = f.dims[3], f.dims[4]
	rec.Scope, rec.Kind, rec.Class = f.dims[5], f.dims[6], f.dims[7]
	n := 0
	for _, d := range f.durs[win] {
		if d.ok {
			n++
		}
	}
	rec.Phases = make([]Phase, 0, n)
	for _, d := range f.durs[win] {
		if d.ok {
			rec.Phases = append(rec.Phases, Phase{d.phase, d.value})
		} else {
			c.BadValues++
		}
	}
	c.PhasesDropped += f.dropped
	c.Records = append(c.Records, rec)
	c.Stats.Records++
}
