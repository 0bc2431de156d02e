package artifact

import (
	"errors"
	"fmt"

	"github.com/substrate/density/pkg/harvest"
)

// Notice is one entry of notices.json (export.md "Notices"): why a field
// is null, or another caveat of the export a reader should see next to
// the numbers. Block is a server_summary block name, "trial_summary",
// "cluster_facts", "phase_breakdown", "ladder", or "" for the whole run;
// Field is the field inside it ("" = the whole block).
type Notice struct {
	Block    string `json:"block"`
	Field    string `json:"field"`
	Severity string `json:"severity"`
	Text     string `json:"text"`
}

// Severities of a Notice: warning for a null or incomplete figure, info
// for any other caveat (Grafana's notice severities of the same names).
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
)

// String is the notice as one line: "block.field: text".
func (n Notice) String() string {
	switch {
	case n.Block == "":
		return n.Text
	case n.Field == "":
		return n.Block + ": " + n.Text
	}
	return n.Block + "." + n.Field + ": " + n.Text
}

// HarvestNotices are the harvest's notices as notices.json entries: a
// failed, empty or warned read is a warning, any other caveat info.
func HarvestNotices(ns []harvest.Notice) []Notice {
	out := make([]Notice, 0, len(ns))
	for _, n := range ns {
		sev := SeverityInfo
		switch n.Kind {
		case harvest.ReadFailed, harvest.Absent, harvest.Warned:
			sev = SeverityWarning
		case harvest.Caveat:
			if n.Block != "" { // a block's caveat is a null's reason (oom_events' Kubernetes counts)
				sev = SeverityWarning
			}
		}
		out = append(out, Notice{Block: n.Block, Field: n.Field, Severity: sev, Text: n.Reason})
	}
	return out
}

// NoticesJSON is the bytes of notices.json: a list of {block, field,
// severity, text} in that key order, indented like the other artifacts,
// with a trailing newline ("[]" when there is none).
func NoticesJSON(ns []Notice) ([]byte, error) {
	list := make([]any, len(ns))
	for i, n := range ns {
		list[i] = Object{{"block", n.Block}, {"field", n.Field}, {"severity", n.Severity}, {"text", n.Text}}
	}
	b, err := MarshalIndent(list)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ErrNotices wraps every ReadNotices failure.
var ErrNotices = errors.New("invalid notices.json")

// ReadNotices parses notices.json strictly: a list of objects with exactly
// the four string keys, a known severity and a text. Errors name the entry.
func ReadNotices(data []byte) ([]Notice, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotices, err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: the document: want a list, got %s", ErrNotices, psiDescribe(v))
	}
	out := make([]Notice, 0, len(list))
	for i, x := range list {
		at := fmt.Sprintf("[%d]", i)
		vs, err := psiExactObject(x, at, "block", "field", "severity", "text")
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrNotices, err)
		}
		var s [4]string
		for j, name := range []string{"block", "field", "severity", "text"} {
			t, ok := vs[j].(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s.%s: want a string, got %s", ErrNotices, at, name, psiDescribe(vs[j]))
			}
			s[j] = t
		}
		n := Notice{Block: s[0], Field: s[1], Severity: s[2], Text: s[3]}
		if n.Severity != SeverityInfo && n.Severity != SeverityWarning {
			return nil, fmt.Errorf("%w: %s.severity: %q (want %q or %q)", ErrNotices, at, n.Severity, SeverityInfo, SeverityWarning)
		}
		if n.Text == "" {
			return nil, fmt.Errorf("%w: %s.text: empty", ErrNotices, at)
		}
		out = append(out, n)
	}
	return out, nil
}
