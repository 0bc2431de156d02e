package harvest

import "fmt"

// Notice says why a field is null, or another caveat a reader should see
// next to the numbers (a restarted atelet, a young run).
type Notice struct {
	Block  string // a Block* name; "" for the whole harvest
	Field  string // the field inside the block ("" = the whole block), e.g. "cpu_stall_pct", "node", "size_p50_mb"
	Reason string // plain words, no credentials
	Kind   NoticeKind
	// Err is the failed read's error (Kind ReadFailed), for callers that
	// need its cause rather than its words.
	Err error
}

// NoticeKind tells what a notice is about, so that callers act on the kind
// rather than on the words.
type NoticeKind int

const (
	// Caveat is any other notice: a restarted process, a young run, a
	// fallback.
	Caveat NoticeKind = iota
	// ReadFailed: a Prometheus read failed; its fields are null.
	ReadFailed
	// Absent: the read succeeded and found no series; its fields are null.
	Absent
	// Warned: the server answered with a warning (partial data).
	Warned
	// Stored: the block was read from the run's stored artifacts.
	Stored
)

func (n Notice) String() string {
	switch {
	case n.Block == "":
		return n.Reason
	case n.Field == "":
		return n.Block + ": " + n.Reason
	default:
		return n.Block + "." + n.Field + ": " + n.Reason
	}
}

// failed is the notice of a read that failed.
func failed(block, field string, err error) Notice {
	return Notice{Block: block, Field: field, Reason: fmt.Sprintf("null: the read failed: %v", err), Kind: ReadFailed, Err: err}
}

// absent is the notice of a successful read that found no series.
func absent(block, field, what string) Notice {
	return Notice{Block: block, Field: field, Reason: fmt.Sprintf("null: no series of %s in the window (nothing was measured)", what), Kind: Absent}
}

// warned is the notice of an answer the server marked as possibly
// incomplete.
func warned(block, warning string) Notice {
	return Notice{Block: block, Reason: "the server warned that the answer may be incomplete: " + warning, Kind: Warned}
}
