package harvest

import "fmt"

// Notice says why a field is null, or another caveat a reader should see
// next to the numbers (a restarted atelet, a young run).
type Notice struct {
	Block  string // a Block* name; "" for the whole harvest
	Field  string // the field inside the block ("" = the whole block), e.g. "cpu_stall_pct", "node", "size_p50_mb"
	Reason string // plain words, no credentials
}

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
	return Notice{Block: block, Field: field, Reason: fmt.Sprintf("null: the read failed: %v", err)}
}

// absent is the notice of a successful read that found no series.
func absent(block, field, what string) Notice {
	return Notice{Block: block, Field: field, Reason: fmt.Sprintf("null: no series of %s in the window (nothing was measured)", what)}
}
