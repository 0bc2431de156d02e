package cli

import (
	"bytes"
	"testing"
)

func TestEscape(t *testing.T) {
	cases := []struct{ in, field, text string }{
		{"plain ünïcode ✓", "plain ünïcode ✓", "plain ünïcode ✓"},
		{"t\x1b[31mx", `t\x1b[31mx`, `t\x1b[31mx`},
		{"a\nb\tc\rd", `a\x0ab\x09c\x0dd`, "a\nb\tc\\x0dd"},
		{"del\x7f nul\x00 bel\x07", `del\x7f nul\x00 bel\x07`, `del\x7f nul\x00 bel\x07`},
		{"csi\u009b2J nel\u0085", `csi\x9b2J nel\x85`, `csi\x9b2J nel\x85`},
		{"raw\x9bbyte \xff", `raw\x9bbyte \xff`, `raw\x9bbyte \xff`},
		{"\u00a0nbsp stays", "\u00a0nbsp stays", "\u00a0nbsp stays"},
	}
	for _, c := range cases {
		if got := Escape(c.in); got != c.field {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.field)
		}
		var b bytes.Buffer
		w := Text(&b)
		if n, err := w.Write([]byte(c.in)); err != nil || n != len(c.in) {
			t.Errorf("Write(%q) = %d, %v", c.in, n, err)
		}
		if b.String() != c.text {
			t.Errorf("Text(%q) wrote %q, want %q", c.in, b.String(), c.text)
		}
	}
}

// A character split across writes (a buffered writer's boundary) is
// written whole, not escaped as two bad bytes.
func TestTextSplitCharacter(t *testing.T) {
	var b bytes.Buffer
	w := Text(&b)
	in := []byte("ok ✓ \u009b end")
	for i := range in {
		if _, err := w.Write(in[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if want := `ok ✓ \x9b end`; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	if Text(w) != w || Raw(w) != &b || Raw(&b) != &b {
		t.Error("Text must not wrap twice; Raw must unwrap")
	}
}
